import type { BatonError, LockableRef, LockState, User } from '@baton/client';
import { useCallback, useState, type ReactNode } from 'react';
import { useLock } from './useLock.js';

export interface LockableRenderProps {
  /** This tab holds the lock: show the editor. */
  editing: boolean;
  state: LockState;
  /** Who holds the lock (you, or who is editing instead). */
  holder: User | null;
  /** Who took the lock away, when `state` is `lost`: keep the draft and say so. */
  lostTo: User | null;
  /** Takes the lock; resolves to false (and sets `error`) when someone else holds it. */
  startEditing: () => Promise<boolean>;
  /** Releases the lock. */
  stopEditing: () => Promise<void>;
  /** "Edit anyway": takes the lock over; false (and `error`) when the holder outranks you. */
  editAnyway: () => Promise<boolean>;
  /** The last refusal (LockHeldError, OutrankedError, NetworkError …), cleared by the next success. */
  error: BatonError | null;
  busy: boolean;
}

export interface LockableProps {
  record: LockableRef;
  children: (props: LockableRenderProps) => ReactNode;
}

/**
 * The "lock before you edit" flow as a render prop:
 *
 *   <Lockable record={card}>{({ editing, startEditing, holder }) => …}</Lockable>
 */
export function Lockable({ record, children }: LockableProps) {
  const lock = useLock(record);
  const [error, setError] = useState<BatonError | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    try {
      await action();
      setError(null);
      return true;
    } catch (e) {
      setError(e as BatonError);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const { acquire, release, editAnyway } = lock;
  const startEditing = useCallback(() => run(acquire), [run, acquire]);
  const stopEditing = useCallback(async () => {
    await run(release);
  }, [run, release]);
  const takeOver = useCallback(() => run(editAnyway), [run, editAnyway]);
  return (
    <>
      {children({
        editing: lock.state === 'mine',
        state: lock.state,
        holder: lock.holder,
        lostTo: lock.lostTo,
        startEditing,
        stopEditing,
        editAnyway: takeOver,
        error,
        busy,
      })}
    </>
  );
}
