import type { Api, LockableRef } from './api.js';
import { LockHeldError, NotFoundError, OutrankedError } from './errors.js';
import { keyOf, type Listener } from './store.js';
import type { EndedLock, Lock, LockEndReason, User } from './types.js';

export type LockState = 'free' | 'mine' | 'theirs' | 'lost';

/** Why a lock ended, from its `destroy` frame; `expired` when the frame does not say. */
export function endReason(lock: Lock | EndedLock): LockEndReason {
  return 'reason' in lock && lock.reason !== 'acquired' ? lock.reason : 'expired';
}

/** What a tab knows about the lock on one record. */
export interface LockInfo {
  state: LockState;
  /** The lock on the record now (this tab's or someone else's). */
  lock: Lock | null;
  /** Who holds it now. */
  holder: User | null;
  /** When this tab's lock ended without it asking: who took it ("Edit anyway"), if anyone. */
  lostTo: User | null;
  /** Why this tab's lock ended, when state is `lost`. */
  lostReason: LockEndReason | null;
}

interface Lost {
  lock: Lock;
  lostTo: User | null;
  reason: LockEndReason;
}

export interface LockManagerOptions {
  api: Api;
  sessionId: string;
  /** The lock on a record as the open cases know it. */
  findLock: (key: string) => Lock | undefined;
  /** Puts a lock this tab got (or learned of) into the open cases. */
  onLock: (lock: Lock) => void;
  /** Takes a lock out of the open cases. */
  onUnlock: (lock: Lock) => void;
  /** Whether a case is open (then its store knows its locks). */
  isOpen: (caseId: number) => boolean;
}

/** This tab's locks: acquire, release, "Edit anyway", and noticing when one is lost. */
export class LockManager {
  private held = new Map<string, Lock>();
  /** When each held lock was last confirmed, on a counter (see `mark`). */
  private heldAt = new Map<string, number>();
  private clock = 0;
  private lost = new Map<string, Lost>();
  /** Others' locks learned from refusals (409, 403), for records whose case is not open. */
  private refused = new Map<string, Lock>();
  private listeners = new Set<Listener>();
  private cache = new Map<string, LockInfo>();
  private last = new Map<string, LockInfo>();
  private pageHide: (() => void) | null = null;

  constructor(private readonly options: LockManagerOptions) {}

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Something about locks changed (here or in an open case). */
  changed = (): void => {
    this.cache.clear();
    for (const listener of [...this.listeners]) listener();
  };

  /**
   * The token to send as `Lock-Token` when saving a record: this tab's lock,
   * or the lock it lost, so that a save from a tab that lost its lock is
   * refused (423 while the taker holds it, 412 `lock_lost` after) instead of
   * writing over newer work. Acquire, release or dismiss to clear a loss.
   */
  tokenFor(record: LockableRef): string | null {
    const key = keyOf(record);
    return this.held.get(key)?.token ?? this.lost.get(key)?.lock.token ?? null;
  }

  /** The lock state of a record; the same object until something changes. */
  info(record: LockableRef): LockInfo {
    const key = keyOf(record);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const other = this.refused.get(key);
    const seen = this.options.findLock(key) ?? (other && !this.options.isOpen(other.caseId) ? other : undefined);
    const mine = this.held.get(key);
    const lock = mine ?? seen ?? null;
    const lost = this.lost.get(key);
    let state: LockState = 'free';
    if (mine) state = 'mine';
    else if (lost) state = 'lost';
    else if (lock) state = this.isMine(lock) ? 'mine' : 'theirs';
    const info: LockInfo = {
      state,
      lock,
      holder: lock?.user ?? null,
      lostTo: state === 'lost' ? (lost?.lostTo ?? null) : null,
      lostReason: state === 'lost' ? (lost?.reason ?? null) : null,
    };
    // unchanged → the same object, so React skips the re-render
    const prev = this.last.get(key);
    const same =
      prev &&
      prev.state === info.state &&
      prev.lock === info.lock &&
      prev.lostTo === info.lostTo &&
      prev.lostReason === info.lostReason;
    const result = same ? prev : info;
    this.last.set(key, result);
    this.cache.set(key, result);
    return result;
  }

  isMine(lock: Lock): boolean {
    return lock.sessionId === this.options.sessionId || [...this.held.values()].some((l) => l.token === lock.token);
  }

  /** Takes the lock (201), or renews it when this tab holds it already (200). */
  acquire(record: LockableRef): Promise<Lock> {
    return this.take(record, false);
  }

  /** "Edit anyway": takes the lock over from its holder in one step. */
  editAnyway(record: LockableRef): Promise<Lock> {
    return this.take(record, true);
  }

  private async take(record: LockableRef, takeover: boolean): Promise<Lock> {
    try {
      const { data: lock } = await this.options.api.acquireLock(record, takeover);
      this.adopt(lock);
      return lock;
    } catch (error) {
      if (error instanceof LockHeldError || error instanceof OutrankedError) {
        if (error.lock) {
          this.refused.set(keyOf(record), error.lock);
          this.options.onLock(error.lock);
        }
        this.changed();
      }
      throw error;
    }
  }

  /** Releases this tab's lock on a record (a lock already gone counts as released). */
  async release(record: LockableRef): Promise<void> {
    const key = keyOf(record);
    this.lost.delete(key);
    this.refused.delete(key);
    const lock = this.held.get(key);
    if (!lock) {
      this.changed();
      return;
    }
    this.held.delete(key);
    this.options.onUnlock(lock);
    this.changed();
    try {
      await this.options.api.releaseLock(lock.token);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }

  /** Releases every lock of this tab (`DELETE /locks?session=mine`). */
  async releaseAll(keepalive = false): Promise<void> {
    const locks = [...this.held.values()];
    this.held.clear();
    this.lost.clear();
    for (const lock of locks) this.options.onUnlock(lock);
    this.changed();
    await this.options.api.releaseSessionLocks(keepalive);
  }

  /** Forgets a record's lock without asking the server (the record was deleted with it). */
  forget(record: LockableRef): void {
    const key = keyOf(record);
    const lock = this.held.get(key);
    this.held.delete(key);
    this.lost.delete(key);
    this.refused.delete(key);
    if (lock) this.options.onUnlock(lock);
    this.changed();
  }

  /** Forgets that a lock was lost (the app has told the person). */
  dismiss(record: LockableRef): void {
    if (this.lost.delete(keyOf(record))) this.changed();
  }

  /** Records a lock this tab holds (from a response, or found again after a reload). */
  adopt(lock: Lock): void {
    const key = keyOf(lock.lockable);
    this.refused.delete(key);
    this.held.set(key, lock);
    this.heldAt.set(key, ++this.clock);
    this.lost.delete(key);
    this.options.onLock(lock);
    this.changed();
  }

  /** A lock ended; if it was this tab's and the tab did not end it, the lock is lost. */
  ended(lock: Lock | EndedLock): void {
    const key = keyOf(lock.lockable);
    const mine = this.held.get(key);
    if (!mine || mine.token !== lock.token) return;
    this.held.delete(key);
    const lostTo = 'overriddenBy' in lock ? (lock.overriddenBy ?? null) : null;
    this.lost.set(key, { lock: mine, lostTo, reason: endReason(lock) });
    this.changed();
  }

  /** A save was refused with `lock_lost`: the lock is gone. */
  lostOn(record: LockableRef): void {
    const key = keyOf(record);
    const mine = this.held.get(key);
    if (!mine) {
      this.changed();
      return;
    }
    this.held.delete(key);
    const now = this.options.findLock(key);
    this.lost.set(key, {
      lock: mine,
      lostTo: now && now.token !== mine.token ? now.user : null,
      reason: now && now.token !== mine.token ? 'overridden' : 'expired',
    });
    this.changed();
  }

  /** A point in time for `reconcile`: taken before a snapshot is requested. */
  mark(): number {
    return this.clock;
  }

  /**
   * After a (re)load of a case: its active locks are the truth. Locks of this
   * tab's session are adopted (a reload within the grace keeps them); held
   * locks of that case that are gone are lost.
   */
  reconcile(caseId: number, active: Lock[], since: number): void {
    const tokens = new Set(active.map((l) => l.token));
    for (const [key, lock] of this.held) {
      // a lock taken while the snapshot was on its way is not in it
      if (lock.caseId !== caseId || tokens.has(lock.token) || (this.heldAt.get(key) ?? 0) > since) continue;
      this.held.delete(key);
      const now = active.find((l) => keyOf(l.lockable) === key);
      this.lost.set(key, { lock, lostTo: now?.user ?? null, reason: now ? 'overridden' : 'disconnected' });
    }
    for (const lock of active) {
      const key = keyOf(lock.lockable);
      if (lock.sessionId === this.options.sessionId && !this.held.has(key)) {
        this.held.set(key, lock);
        this.lost.delete(key);
        this.heldAt.set(key, since);
      }
    }
    this.changed();
  }

  /**
   * Releases the tab's locks when the page goes away for good (`pagehide`
   * without the back/forward cache), with `keepalive` so the request outlives
   * the page. Returns a function that removes the listener.
   */
  releaseOnPageHide(target: EventTarget | undefined = typeof addEventListener === 'function' ? globalThis : undefined): () => void {
    if (!target || this.pageHide) return () => {};
    const handler = (event: Event) => {
      // going into the back/forward cache: the page may come back with its locks
      if ('persisted' in event && event.persisted) return;
      if (this.held.size === 0) return;
      void this.releaseAll(true).catch(() => {});
    };
    target.addEventListener('pagehide', handler);
    this.pageHide = () => {
      target.removeEventListener('pagehide', handler);
      this.pageHide = null;
    };
    return this.pageHide;
  }

  /** Stops listening for `pagehide`. */
  dispose(): void {
    this.pageHide?.();
  }
}
