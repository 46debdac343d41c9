import type { Session } from '@baton/client';
import { useBaton } from '@baton/react';
import { useCallback, useEffect, useState } from 'react';
import { Avatar } from './Avatar';
import { message, time } from './format';

const POLL_MS = 2000;

/** Site admins: every open tab on every instance, with "Kick". */
export function AdminSessions() {
  const baton = useBaton();
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(
    (): Promise<void> =>
      baton.api.sessions().then(
        (found) => {
          setSessions(found);
          setError(null);
        },
        (e: unknown) => setError(message(e)),
      ),
    [baton],
  );

  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [load]);

  async function kick(session: Session) {
    try {
      await baton.api.kick(session.sessionId);
      setNotice(`Closed ${session.user.name}'s tab on ${session.case.title}.`);
      await load();
    } catch (e) {
      setNotice(`Could not close the tab: ${message(e)}`);
    }
  }

  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Open tabs</h1>
      <p aria-live="polite" data-testid="admin-notice">
        {notice}
      </p>
      {error ? <p role="alert">{error}</p> : null}
      {sessions === null && !error ? <p>Loading…</p> : null}
      {sessions?.length === 0 ? <p>No open tabs.</p> : null}
      {sessions && sessions.length > 0 ? (
        <table data-testid="sessions">
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Case</th>
              <th scope="col">Locks</th>
              <th scope="col">Since</th>
              <th scope="col">Instance</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.sessionId} data-testid="session-row" data-user={s.user.name} data-session={s.sessionId}>
                <td>
                  <Avatar name={s.user.name} color={s.user.color} size="small" decorative /> {s.user.name}
                  {s.sessionId === baton.sessionId ? <span className="muted"> (this tab)</span> : null}
                </td>
                <td>{s.case.title}</td>
                <td>{s.locks.length === 0 ? '—' : s.locks.map((l) => `${l.lockable.type} ${l.lockable.param}`).join(', ')}</td>
                <td>{time(s.connectedAt)}</td>
                <td>
                  <code>{s.instanceId.slice(0, 8)}</code>
                </td>
                <td>
                  <button type="button" onClick={() => void kick(s)} aria-label={`Kick ${s.user.name}'s tab on ${s.case.title}`}>
                    Kick
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
