import type { TokenRequest, User } from '@baton/client';
import { useBaton } from '@baton/react';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { rememberToken } from './client';
import { message } from './format';

export interface SignInAgainProps {
  me: User;
  reason: TokenRequest['reason'];
  /** Signed in again: the kit carries on with this token. */
  onToken: (token: string) => void;
  /** The person would rather sign out. */
  onSignOut: () => void;
}

/**
 * The password, asked again in a dialog over the page when the sign-in has
 * ended (or is about to): the page stays as it is behind it — drafts, locks
 * and the live case — and carries on once the person signs in.
 */
export function SignInAgain({ me, reason, onToken, onSignOut }: SignInAgainProps) {
  const baton = useBaton();
  const dialog = useRef<HTMLDialogElement>(null);
  const [email, setEmail] = useState(me.email ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  const errorId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { token, user } = await baton.api.login(email.trim(), password);
      // the page is this person's: their drafts and locks carry on only as them
      if (user.id !== me.id) {
        setError(`Sign in as ${me.name} to carry on, or sign out.`);
        return;
      }
      rememberToken(token);
      onToken(token);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <dialog
      ref={dialog}
      className="signin-again"
      aria-labelledby={titleId}
      data-testid="sign-in-again"
      // Escape does not close it: the page needs a token, or the person signs out
      onCancel={(e) => e.preventDefault()}
    >
      <form onSubmit={(e) => void submit(e)} aria-describedby={error ? errorId : undefined}>
        <h2 id={titleId}>{reason === 'expiring' ? 'Your sign-in is ending' : 'Your sign-in has ended'}</h2>
        <p>Enter your password to carry on. Your unsaved changes and your locks are kept.</p>
        {me.email ? (
          <p className="muted">
            Signed in as <strong>{me.name}</strong> ({me.email})
          </p>
        ) : (
          <label>
            Email
            <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
        )}
        <label>
          Password
          <input type="password" autoComplete="current-password" required autoFocus value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error ? (
          <p className="error" role="alert" id={errorId}>
            {error}
          </p>
        ) : null}
        <div className="field-bar">
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
          <button type="button" className="secondary" onClick={onSignOut} disabled={busy}>
            Sign out
          </button>
        </div>
      </form>
    </dialog>
  );
}
