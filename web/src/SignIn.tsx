import type { DemoPerson, User } from '@baton/client';
import { useBaton } from '@baton/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { message } from './format';

/** The demo users, when the server runs with `--demo` (`GET /auth/demo` is 404 otherwise). */
function useDemoUsers(): DemoPerson[] {
  const baton = useBaton();
  const [users, setUsers] = useState<DemoPerson[]>([]);
  useEffect(() => {
    let live = true;
    baton.api
      .demoPeople()
      .then(({ users }) => {
        if (live) setUsers(users);
      })
      .catch(() => {
        // not a demo server
      });
    return () => {
      live = false;
    };
  }, [baton]);
  return users;
}

export interface SignInProps {
  notice?: string | undefined;
  onSignedIn: (token: string, user: User) => void;
}

export function SignIn({ notice, onSignedIn }: SignInProps) {
  const baton = useBaton();
  const demo = useDemoUsers();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const errorId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const user = await baton.login(email.trim(), password);
      const token = baton.getToken();
      if (token) onSignedIn(token, user);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="signin" id="main">
      <h1>Sign in to baton</h1>
      {notice ? <p role="status">{notice}</p> : null}
      <form onSubmit={(e) => void submit(e)} aria-describedby={error ? errorId : undefined}>
        <label>
          Email
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {error ? (
          <p className="error" role="alert" id={errorId}>
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {demo.length > 0 ? (
        <section className="demo-users" aria-labelledby="demo-title" data-testid="demo-users">
          <h2 id="demo-title">Demo users</h2>
          <p>
            This server runs in demo mode. Every demo user's password is <code>demo</code>.
          </p>
          <ul>
            {demo.map((u) => (
              <li key={u.email}>
                <button
                  type="button"
                  className="link"
                  onClick={() => {
                    setEmail(u.email);
                    setPassword('demo');
                  }}
                >
                  {u.name} <span className="muted">({u.email})</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </main>
  );
}
