import { BatonError, CancelledError, NetworkError, type Lockable, type MoveTarget } from '@baton/client';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useBaton } from './context.js';
import { useLock } from './useLock.js';

export type { MoveTarget };

export interface UseDragLock<T extends Lockable = Lockable> {
  /** A drag of this tab holds the record's lock now (taken at its start, until the drop or the cancel). */
  dragging: boolean;
  /** The lock is being taken, or the move saved. */
  busy: boolean;
  /** The last refusal (LockHeldError at the start, LockedError at the drop, …), cleared by the next start. */
  error: BatonError | null;
  /** Drag start: takes the record's lock. False (and `error`) when someone else holds it or a record it is in. */
  start: () => Promise<boolean>;
  /**
   * Drop: waits for the start's lock, saves the move under it
   * (`PATCH /tickets/:id {ticket: {projectId, position}}` with `Lock-Token`),
   * then releases it. The moved record, or null (and `error`) when refused; the lock
   * is released either way.
   */
  drop: (to: MoveTarget) => Promise<T | null>;
  /** Drag cancelled: releases the lock the start took, or is still taking (that lock is released when it comes). */
  cancel: () => Promise<void>;
}

const asBatonError = (e: unknown): BatonError => (e instanceof BatonError ? e : new NetworkError(String(e), e));

/**
 * "Lock while dragging" for a record of a movable type (a ticket): everyone
 * sees it as held by this tab from the drag's start, and in its new place as
 * soon as the drop is saved.
 *
 *   const drag = useDragLock(ticket);
 *   <li draggable onDragStart={() => void drag.start()} onDragEnd={…cancel unless dropped…}>
 *   // on the target: await drag.drop({ parentId: project.id, position })
 */
export function useDragLock<T extends Lockable>(record: T): UseDragLock<T> {
  const client = useBaton();
  const lock = useLock(record);
  const [error, setError] = useState<BatonError | null>(null);
  const [busy, setBusy] = useState(false);
  const [active, setActive] = useState(false);
  /** The lock the drag's start asked for: a drop may come before it is granted. */
  const taking = useRef<Promise<boolean> | null>(null);
  const recordRef = useRef(record);
  useEffect(() => {
    recordRef.current = record;
  });

  const release = useCallback(async () => {
    taking.current = null;
    setActive(false);
    await client.locks.release(recordRef.current).catch(() => {});
  }, [client]);

  const start = useCallback((): Promise<boolean> => {
    setError(null);
    setBusy(true);
    setActive(true);
    const attempt = client.locks
      .acquire(recordRef.current)
      .then(() => true)
      .catch((e: unknown) => {
        // a cancel while the lock was being taken released it: not a refusal
        if (!(e instanceof CancelledError)) setError(asBatonError(e));
        setActive(false);
        return false;
      })
      .finally(() => setBusy(false));
    taking.current = attempt;
    return attempt;
  }, [client]);

  const drop = useCallback(
    async (to: MoveTarget): Promise<T | null> => {
      const took = await (taking.current ?? Promise.resolve(false));
      if (!took) {
        await release();
        return null;
      }
      setBusy(true);
      try {
        // the record as the tab knows it now, for If-Match
        return await client.move(recordRef.current, to);
      } catch (e) {
        setError(asBatonError(e));
        return null;
      } finally {
        await release();
        setBusy(false);
      }
    },
    [client, release],
  );

  return { dragging: active && lock.state === 'owned', busy, error, start, drop, cancel: release };
}
