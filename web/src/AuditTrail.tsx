import type { LiveState, LockAction, LockEvent } from '@baton/client';
import { useBaton, useLiveCase, useLiveSelector } from '@baton/react';
import { useCallback, useEffect, useState } from 'react';
import { message, time } from './format';
import { href } from './router';

const ACTION: Record<LockAction, string> = {
  acquired: 'locked',
  released: 'released',
  overridden: 'overrode',
  expired: 'expired',
  idle: 'released (idle)',
  disconnected: 'released (tab closed)',
  kicked: 'released (tab kicked)',
  queued: 'joined the line',
  handed_off: 'got it from the line',
};

const locksOf = (s: LiveState) => s.locks;
const caseOf = (s: LiveState) => s.case;

/** A case's audit trail (managers): who locked, released, overrode, what expired. Refreshed as locks change. */
export function AuditTrail({ slug }: { slug: string }) {
  const baton = useBaton();
  // refreshed when the case's locks change (the store keeps the list identical through other changes)
  const live = useLiveCase(slug);
  const locks = useLiveSelector(live, locksOf);
  const current = useLiveSelector(live, caseOf);
  const [events, setEvents] = useState<LockEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(
    (): Promise<void> =>
      baton.api.lockEvents(slug).then(
        (found) => {
          setEvents(found);
          setError(null);
        },
        (e: unknown) => setError(message(e)),
      ),
    [baton, slug],
  );

  useEffect(() => {
    void load();
  }, [load, locks]);

  return (
    <section aria-labelledby="audit-title">
      <p>
        <a href={href({ name: 'case', slug })}>← Back to {current?.title ?? slug}</a>
      </p>
      <h1 id="audit-title">Audit trail</h1>
      <button type="button" className="secondary" onClick={() => void load()}>
        Refresh
      </button>
      {error ? <p role="alert">{error}</p> : null}
      {events === null && !error ? <p>Loading…</p> : null}
      {events ? (
        <table data-testid="audit-trail">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">Record</th>
              <th scope="col">Holder</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.param}>
                <td>{time(e.at)}</td>
                <td>{ACTION[e.action]}</td>
                <td>
                  {e.lockable.type} {e.lockable.param}
                </td>
                <td>{e.holder.name}</td>
                <td>{e.actor?.name ?? 'baton'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
