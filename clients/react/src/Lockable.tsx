import {
  BatonError,
  CancelledError,
  NetworkError,
  OutrankedError,
  type Lock,
  type LockEndReason,
  type LockState,
  type TargetRef,
  type User,
  type Waiter,
  type WaiterEndReason,
} from '@baton/client';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { useBaton } from './context.js';
import { useLock } from './useLock.js';

export interface LockableRenderProps {
  /** This tab holds the lock: show the editor. */
  editing: boolean;
  state: LockState;
  /** Who holds the lock (you, or who is editing instead). */
  holder: User | null;
  /** The lock on the record now (this tab's or someone else's; the deep lock on a container when the record has none of its own). */
  lock: Lock | null;
  /**
   * Someone else's deep lock on one of the record's containers (its parent,
   * …, its case): the record reads as theirs ("Alice is restructuring this
   * project"). "Edit anyway" cannot get past it; only a takeover of that
   * lock could.
   */
  containerLock: Lock | null;
  /** Who took the lock away, when `state` is `lost`: keep the draft and say so. */
  lostTo: User | null;
  /** Why this tab's lock ended, when `state` is `lost` (`overridden`, `expired`, `kicked`, …). */
  lostReason: LockEndReason | null;
  /**
   * The holder of the current lock, when "Edit anyway" was refused because
   * they outrank you (403 `outranked`): don't offer it again for this lock.
   */
  outrankedBy: User | null;
  /** This tab's place in the line (1 = next), when `state` is `waiting`. */
  position: number | null;
  /** Everyone waiting for the record, in line order: the holder sees who is next. */
  waiters: Waiter[];
  /** Why this tab's place in the line ended without it asking (`expired`, `disconnected`, `kicked`, `left`). */
  lineEnded: WaiterEndReason | null;
  /** Takes the lock; resolves to false (and sets `error`) when someone else holds it. */
  startEditing: () => Promise<boolean>;
  /** Releases the lock (or forgets a lost one). */
  stopEditing: () => Promise<void>;
  /** "Edit anyway": takes the lock over; false (and `error`) when the holder outranks you. */
  editAnyway: () => Promise<boolean>;
  /**
   * "Wait for it": joins the record's line (or takes the lock if it is free
   * now); when this tab's turn comes the lock is handed over and `editing`
   * becomes true by itself. False (and `error`) when refused.
   */
  waitForIt: () => Promise<boolean>;
  /** Leaves the line. */
  leaveLine: () => Promise<void>;
  /** The last refusal (LockHeldError, OutrankedError, NetworkError …), cleared by the next success. */
  error: BatonError | null;
  busy: boolean;
}

export interface LockableProps {
  record: TargetRef;
  /** Release this tab's lock on the record (or leave its line) when the component unmounts (e.g. the person goes to another screen). */
  releaseOnUnmount?: boolean;
  children: (props: LockableRenderProps) => ReactNode;
}

const asBatonError = (e: unknown): BatonError => (e instanceof BatonError ? e : new NetworkError(String(e), e));

/**
 * The "lock before you edit" flow as a render prop:
 *
 *   <Lockable record={ticket}>{({ editing, startEditing, holder }) => …}</Lockable>
 */
export function Lockable({ record, releaseOnUnmount = false, children }: LockableProps) {
  const client = useBaton();
  const lock = useLock(record);
  const [error, setError] = useState<BatonError | null>(null);
  const [busy, setBusy] = useState(false);
  /** The lock a refused "Edit anyway" was for. */
  const [outranked, setOutranked] = useState<Lock | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    try {
      await action();
      setError(null);
      return true;
    } catch (e) {
      // released while it was being taken: nothing was refused
      if (e instanceof CancelledError) return false;
      const refusal = asBatonError(e);
      if (refusal instanceof OutrankedError) setOutranked(refusal.lock);
      setError(refusal);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const { acquire, release, editAnyway, wait, leave } = lock;
  const startEditing = useCallback(() => run(acquire), [run, acquire]);
  const stopEditing = useCallback(async () => {
    await run(release);
  }, [run, release]);
  const takeOver = useCallback(async () => {
    const took = await run(editAnyway);
    if (took) setOutranked(null);
    return took;
  }, [run, editAnyway]);

  const waitForIt = useCallback(() => run(wait), [run, wait]);
  const leaveLine = useCallback(async () => {
    await run(leave);
  }, [run, leave]);

  // leaving (unmounting) releases the lock this tab holds, or its place in the line, when asked to:
  // a tick later, so that StrictMode's unmount-and-mount-again (or a remount at once) keeps it
  const leaving = useRef<ReturnType<typeof setTimeout> | null>(null);
  const { type, param } = record;
  useEffect(() => {
    if (!releaseOnUnmount) return;
    if (leaving.current) clearTimeout(leaving.current);
    leaving.current = null;
    return () => {
      const ref = { type, param };
      // an acquire still in flight loses at once: the lock it brings is released, never adopted
      if (client.locks.isPending(ref)) void client.locks.release(ref).catch(() => {});
      leaving.current = setTimeout(() => {
        leaving.current = null;
        const state: LockState = client.locks.info(ref).state;
        if (state === 'owned') void client.locks.release(ref).catch(() => {});
        if (state === 'waiting') void client.locks.leave(ref).catch(() => {});
      }, 0);
    };
  }, [releaseOnUnmount, client, type, param]);

  const current = lock.lock;
  return (
    <>
      {children({
        editing: lock.state === 'owned',
        state: lock.state,
        holder: lock.holder,
        lock: current,
        containerLock: lock.containerLock,
        lostTo: lock.lostTo,
        lostReason: lock.lostReason,
        outrankedBy: outranked && current && outranked.token === current.token ? current.user : null,
        position: lock.position,
        waiters: lock.waiters,
        lineEnded: lock.lineEnded,
        startEditing,
        stopEditing,
        editAnyway: takeOver,
        waitForIt,
        leaveLine,
        error,
        busy,
      })}
    </>
  );
}
