import type { Lock, LockDepth, LockEndReason, LockInfo, LockState, TargetRef, User, Waiter, WaiterEndReason } from '@baton/client';
import { useCallback, useSyncExternalStore } from 'react';
import { useBaton } from './context.js';

const UNLOCKED: LockInfo = Object.freeze({
  state: 'unlocked',
  lock: null,
  containerLock: null,
  holder: null,
  lostTo: null,
  lostReason: null,
  position: null,
  waiter: null,
  waiters: [],
  lineEnded: null,
});

export interface UseLock {
  /**
   * `unlocked`, `owned` (this tab holds it), `locked` (someone else does),
   * as baton says them; and the kit's `waiting` (this tab is in the line
   * for it) and `lost` (this tab's lock was taken or ended).
   */
  state: LockState;
  /** Who holds the lock now. */
  holder: User | null;
  lock: Lock | null;
  /** Someone else's deep lock on one of the record's containers: a record it is inside, or its case (then `lock` is that lock and `state` is `locked`). */
  containerLock: Lock | null;
  /** Who took this tab's lock ("Edit anyway"), when `state` is `lost`. */
  lostTo: User | null;
  lostReason: LockEndReason | null;
  /** This tab's place in the line (1 = next), when `state` is `waiting`. */
  position: number | null;
  /** This tab's waiter, when `state` is `waiting`. */
  waiter: Waiter | null;
  /** Everyone waiting for the record, in line order (known through an open case). */
  waiters: Waiter[];
  /** Why this tab's place in the line ended without it asking (`expired`, `disconnected`, `kicked`, `left`). */
  lineEnded: WaiterEndReason | null;
  /** Takes the lock (`depth: 'infinity'`: with everything inside the record); rejects with LockHeldError when someone else has it. */
  acquire: (options?: { depth?: LockDepth }) => Promise<Lock>;
  /** Releases this tab's lock (or forgets a lost one). */
  release: () => Promise<void>;
  /** Takes the lock over from its holder; rejects with OutrankedError when the holder outranks you. */
  editAnyway: () => Promise<Lock>;
  /** "Wait for it": takes the lock if it is free, else joins the line; the lock comes by itself when it is this tab's turn. */
  wait: () => Promise<Lock | Waiter>;
  /** Leaves the line. */
  leave: () => Promise<void>;
}

/**
 * The lock on a record, live. Others' locks and the record's line are seen
 * through the open cases (`useCase`), this tab's own always.
 */
export function useLock(record: TargetRef | null): UseLock {
  const client = useBaton();
  const type = record?.type ?? null;
  const param = record?.param ?? null;
  const get = useCallback(
    () => (type && param ? client.locks.info({ type, param }) : UNLOCKED),
    [client, type, param],
  );
  const info = useSyncExternalStore(client.locks.subscribe, get, get);
  const need = useCallback((): TargetRef => {
    if (!type || !param) throw new Error('useLock: no record');
    return { type, param };
  }, [type, param]);
  const acquire = useCallback((options?: { depth?: LockDepth }) => client.locks.acquire(need(), options), [client, need]);
  const release = useCallback(() => client.locks.release(need()), [client, need]);
  const editAnyway = useCallback(() => client.locks.editAnyway(need()), [client, need]);
  const wait = useCallback(() => client.locks.wait(need()), [client, need]);
  const leave = useCallback(() => client.locks.leave(need()), [client, need]);
  return { ...info, acquire, release, editAnyway, wait, leave };
}
