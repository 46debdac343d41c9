import type { LockAction, LockEvent } from '@baton/client';
import { useBaton, useCase } from '@baton/react';
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

/** A case's audit trail (managers): who locked, released, overrode, what expired. Refreshed as locks change. */
export function AuditTrail({ slug }: { slug: string }) {
  const baton = useBaton();
  const { locks, case: current } = useCase(slug);
  const [events, setEvents] = useState<LockEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setEvents(await baton.api.lockEvents(slug));
      setError(null);
    } catch (e) {
      setError(message(e));
    }
  }, [baton, slug]);

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
