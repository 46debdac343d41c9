import { BatonError, type TokenRequest, type User } from '@baton/client';
import { useAuthError, useBaton } from '@baton/react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { AdminSessions } from './AdminSessions';
import { AuditTrail } from './AuditTrail';
import { CaseEditor } from './CaseEditor';
import { CaseList } from './CaseList';
import { rememberToken, renewTokensWith } from './client';
import { message } from './format';
import { guardLeaving, href, useRoute } from './router';
import { SignIn } from './SignIn';
import { SignInAgain } from './SignInAgain';

type Auth = { state: 'checking' } | { state: 'out'; notice?: string } | { state: 'in'; user: User };

/** The kit asked for a fresh token: the dialog is open until the person signs in again (or out). */
interface Renewal {
  reason: TokenRequest['reason'];
  answer: (token: string | null) => void;
}

/** Whether the person may leave their unsaved changes behind (asked only when there are some). */
function mayDropChanges(hasChanges: boolean, what: string): boolean {
  return !hasChanges || window.confirm(`You have unsaved changes. ${what}`);
}

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

  // the sign-in ends: the password is asked again over the page, which keeps its drafts, locks and channel
  const [renewal, setRenewal] = useState<Renewal | null>(null);
  const asking = useRef<Promise<string | null> | null>(null);
  const signedIn = auth.state === 'in';
  useEffect(() => {
    if (!signedIn) return;
    renewTokensWith((request) => {
      asking.current ??= new Promise<string | null>((resolve) => {
        setRenewal({
          reason: request.reason,
          answer: (token) => {
            asking.current = null;
            setRenewal(null);
            resolve(token);
          },
        });
      });
      return asking.current;
    });
    return () => renewTokensWith(null);
  }, [signedIn]);

  // leaving a case with unsaved changes asks first
  useEffect(() => {
    guardLeaving((from, to) => {
      const leaves = from.name === 'case' && (to.name !== 'case' || to.slug !== from.slug);
      return !leaves || mayDropChanges(baton.drafts.hasChanges, 'Leave this case and discard them?');
    });
    return () => guardLeaving(null);
  }, [baton]);

  const onAuthError = useCallback(
    (error: Error) => {
      rememberToken(null);
      for (const draft of baton.drafts.all()) baton.drafts.discard(draft.key);
      baton.closeAll();
      // the server closed the tab's channel because the token ended (logout elsewhere, a password change)
      const signedOut = error instanceof BatonError && error.code === 'signed_out';
      setAuth({ state: 'out', notice: signedOut ? 'You were signed out.' : 'Your sign-in has ended. Please sign in again.' });
    },
    [baton],
  );
  useAuthError(onAuthError);

  const signOut = useCallback(async (ask = true) => {
    if (ask && !mayDropChanges(baton.drafts.hasChanges, 'Sign out and discard them?')) return;
    // signing out needs no fresh token
    renewTokensWith(null);
    for (const draft of baton.drafts.all()) baton.drafts.discard(draft.key);
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
      {renewal ? (
        <SignInAgain
          me={me}
          reason={renewal.reason}
          onToken={(token) => renewal.answer(token)}
          onSignOut={() => {
            if (!mayDropChanges(baton.drafts.hasChanges, 'Sign out and discard them?')) return;
            renewTokensWith(null);
            renewal.answer(null);
            void signOut(false);
          }}
        />
      ) : null}
      <main id="main">
        {route.name === 'cases' ? <CaseList /> : null}
        {route.name === 'case' ? <CaseEditor key={route.slug} slug={route.slug} me={me} /> : null}
        {route.name === 'audit' ? <AuditTrail slug={route.slug} /> : null}
        {route.name === 'admin' ? me.admin ? <AdminSessions /> : <p>Only site admins see open tabs.</p> : null}
      </main>
    </div>
  );
}
