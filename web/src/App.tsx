import { BatonError, type User } from '@baton/client';
import { useAuthError, useBaton } from '@baton/react';
import { useCallback, useEffect, useState } from 'react';
import { AdminSessions } from './AdminSessions';
import { AuditTrail } from './AuditTrail';
import { CaseEditor } from './CaseEditor';
import { CaseList } from './CaseList';
import { rememberToken } from './client';
import { message } from './format';
import { href, useRoute } from './router';
import { SignIn } from './SignIn';

type Auth = { state: 'checking' } | { state: 'out'; notice?: string } | { state: 'in'; user: User };

export function App() {
  const baton = useBaton();
  const route = useRoute();
  const [auth, setAuth] = useState<Auth>(() => (baton.signedIn ? { state: 'checking' } : { state: 'out' }));

  useEffect(() => {
    if (auth.state !== 'checking') return;
    let live = true;
    baton.api.me().then(
      (user) => live && setAuth({ state: 'in', user }),
      () => {
        if (!live) return;
        rememberToken(null);
        setAuth({ state: 'out' });
      },
    );
    return () => {
      live = false;
    };
  }, [baton, auth.state]);

  const onAuthError = useCallback(
    (error: Error) => {
      rememberToken(null);
      baton.closeAll();
      // the server closed the tab's channel because the token ended (logout elsewhere, a password change)
      const signedOut = error instanceof BatonError && error.code === 'signed_out';
      setAuth({ state: 'out', notice: signedOut ? 'You were signed out.' : 'Your sign-in has ended. Please sign in again.' });
    },
    [baton],
  );
  useAuthError(onAuthError);

  const signOut = useCallback(async () => {
    try {
      await baton.locks.releaseAll();
    } catch {
      // locks end with the token anyway
    }
    try {
      await baton.logout();
    } catch (error) {
      console.warn('sign out:', message(error));
    }
    rememberToken(null);
    setAuth({ state: 'out' });
    window.location.hash = '#/';
  }, [baton]);

  if (auth.state === 'checking') return <p className="centered">Loading…</p>;
  if (auth.state === 'out') {
    return (
      <SignIn
        notice={auth.notice}
        onSignedIn={(token, user) => {
          rememberToken(token);
          setAuth({ state: 'in', user });
        }}
      />
    );
  }

  const me = auth.user;
  return (
    <div className="app">
      <header className="topbar">
        <a className="brand" href={href({ name: 'cases' })}>
          baton
        </a>
        <nav aria-label="Main">
          <a href={href({ name: 'cases' })}>My cases</a>
          {me.admin ? <a href={href({ name: 'admin' })}>Open tabs</a> : null}
        </nav>
        <span className="me" data-testid="me">
          Signed in as <strong>{me.name}</strong>
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="main">
        {route.name === 'cases' ? <CaseList /> : null}
        {route.name === 'case' ? <CaseEditor key={route.slug} slug={route.slug} me={me} /> : null}
        {route.name === 'audit' ? <AuditTrail slug={route.slug} /> : null}
        {route.name === 'admin' ? me.admin ? <AdminSessions /> : <p>Only site admins see open tabs.</p> : null}
      </main>
    </div>
  );
}
