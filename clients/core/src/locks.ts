import type { Api, LockOptions } from './api.js';
import { BatonError, LockHeldError, NetworkError, NoneFreeError, NotFoundError, OutrankedError } from './errors.js';
import { positionIn, waiterEnd } from './line.js';
import { keyOf, type Listener } from './store.js';
import type { EndedLock, EndedWaiter, Lock, LockEndReason, LockStatus, TargetRef, User, Waiter, WaiterEndReason } from './types.js';

/**
 * A record's lock as this tab sees it. The first three are baton's own
 * (`GET /locks/status`): `unlocked` (nobody holds it), `owned` (this tab
 * does), `locked` (someone else does, or holds one of its containers
 * deeply). The kit adds two: `waiting` (this tab is in the record's
 * line, and gets the lock when its turn comes) and `lost` (this tab's lock
 * ended without it asking).
 */
export type LockState = 'unlocked' | 'owned' | 'locked' | 'waiting' | 'lost';

/** Why a lock ended, from its `destroy` frame; `expired` when the frame does not say. */
export function endReason(lock: Lock | EndedLock): LockEndReason {
  const reason = 'reason' in lock ? lock.reason : 'expired';
  return reason === 'acquired' || reason === 'queued' || reason === 'handed_off' ? 'expired' : reason;
}

/** What a tab knows about the lock on one record. */
export interface LockInfo {
  state: LockState;
  /** The lock on the record now (this tab's or someone else's; the deep lock on a container when the record has none of its own). */
  lock: Lock | null;
  /**
   * Someone else's deep lock on one of the record's containers (a record
   * it is inside, or its case): the record is theirs too ("Bob is editing
   * this project"). Taking it over means taking over that lock, not the
   * record's.
   */
  containerLock: Lock | null;
  /** Who holds it now. */
  holder: User | null;
  /** When this tab's lock ended without it asking: who took it ("Edit anyway"), if anyone. */
  lostTo: User | null;
  /** Why this tab's lock ended, when state is `lost`. */
  lostReason: LockEndReason | null;
  /** This tab's place in the line (1 = next), when state is `waiting`. */
  position: number | null;
  /** This tab's waiter, when state is `waiting`. */
  waiter: Waiter | null;
  /** Everyone waiting for the record, in line order (as the open cases know it). */
  waiters: Waiter[];
  /** Why this tab's place in the line ended without it asking (`expired`, `disconnected`, `kicked`, `left` when the record went). */
  lineEnded: WaiterEndReason | null;
}

const NO_WAITERS: Waiter[] = [];
/** Typing renews a lock's activity at most this often (ms). */
const ACTIVITY_EVERY = 60_000;
const sameList = <T>(a: T[], b: T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

interface Lost {
  lock: Lock;
  lostTo: User | null;
  reason: LockEndReason;
}

/**
 * An acquire (or "Edit anyway", or "Wait for it") that was still in flight
 * when the tab released the record: the lock it got was released on the
 * server, never adopted.
 */
export class CancelledError extends BatonError {
  override name = 'CancelledError';
  constructor(what: string) {
    super('cancelled', 0, `The lock on ${what} was released before it was granted.`);
  }
}

/** An acquire in flight; `cancelled` once the tab released the record meanwhile. */
interface Attempt {
  cancelled: boolean;
  /** Settles once the attempt is over (and a lock it got after its cancel is released). */
  done: Promise<unknown>;
}

/** How many released tokens the tab remembers (tokens are never reused: one it let go is never its again). */
const RELEASED = 10_000;

/** Whether a failed release is worth trying again: no answer, or the server could not answer now. */
const retryable = (error: unknown): boolean =>
  error instanceof NetworkError || (error instanceof BatonError && (error.status >= 500 || error.status === 429 || error.status === 401));

export interface LockManagerOptions {
  api: Api;
  /** The tab's session id (read each time: a duplicated tab takes a new one at start). */
  sessionId: () => string;
  /** Delays between tries of a release that failed (default 500 ms doubling to 30 s). */
  retry?: { initialDelay?: number; maxDelay?: number };
  /** The signed-in user's id, when known: a tab is its user and its session id together. */
  userId?: () => number | null;
  /** The lock on a record as the open cases know it. */
  findLock: (key: string) => Lock | undefined;
  /** The deep lock on a container of a record (a record it is inside, or its case), as the open cases know it. */
  findContainerLock?: (key: string) => Lock | undefined;
  /** Puts a lock this tab got (or learned of) into the open cases. */
  onLock: (lock: Lock) => void;
  /** Takes a lock out of the open cases. */
  onUnlock: (lock: Lock) => void;
  /** Whether a case is open (then its store knows its locks and lines). */
  isOpen: (caseId: number) => boolean;
  /** A record's waiting line as the open cases know it, in line order. */
  findLine?: (key: string) => Waiter[];
  /** Puts a waiter into the open cases, or takes one out. */
  onWaiter?: (waiter: Waiter, gone: boolean) => void;
  /** Whether an open case has its edits channel up (its pongs keep this tab's waiters alive). */
  hasChannel?: (caseId: number) => boolean;
}

/** This tab's locks: acquire, release, "Edit anyway", and noticing when one is lost. */
export class LockManager {
  private held = new Map<string, Lock>();
  /** When each held lock was last confirmed, on a counter (see `mark`). */
  private heldAt = new Map<string, number>();
  private clock = 0;
  private lost = new Map<string, Lost>();
  /** This tab's places in waiting lines, by the record's key. */
  private waiting = new Map<string, Waiter>();
  private lineEnded = new Map<string, WaiterEndReason>();
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;
  /** Others' locks learned from refusals (409, 403), for records whose case is not open. */
  private refused = new Map<string, Lock>();
  private listeners = new Set<Listener>();
  private cache = new Map<string, LockInfo>();
  private last = new Map<string, LockInfo>();
  private pageHide: (() => void) | null = null;
  /** Acquires in flight, by the record's key (the newest last). */
  private attempts = new Map<string, Attempt[]>();
  /** When each held lock's activity was last renewed, and the renewal waiting for its minute. */
  private activity = new Map<string, { at: number; timer: ReturnType<typeof setTimeout> | null }>();
  /**
   * Tokens this tab released or is releasing: never adopted again, from a
   * snapshot taken before the release or from anywhere else.
   */
  private released = new Set<string>();
  /** Releases not yet confirmed by the server: the next try, and how many were made. */
  private releasing = new Map<string, { tries: number; timer: ReturnType<typeof setTimeout> | null; lockable: TargetRef }>();
  /**
   * Records whose acquire lost its answer (the request may have reached
   * baton) while the tab no longer wants them: a lock of this tab found on
   * one is released, not adopted.
   */
  private unwanted = new Map<string, TargetRef>();
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  private idle: (() => void)[] = [];

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
  tokenFor(record: TargetRef): string | null {
    const key = keyOf(record);
    return this.held.get(key)?.token ?? this.lost.get(key)?.lock.token ?? null;
  }

  /** The lock state of a record; the same object until something changes. */
  info(record: TargetRef): LockInfo {
    const key = keyOf(record);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const other = this.refused.get(key);
    const found = this.options.findLock(key) ?? (other && !this.options.isOpen(other.caseId) ? other : undefined);
    // a lock this tab let go is nobody's to this tab, even while the server has not confirmed it yet
    const seen = found && this.released.has(found.token) ? undefined : found;
    const mine = this.held.get(key);
    const container = this.options.findContainerLock?.(key);
    // this tab's own deep lock lets it work inside; someone else's holds the record
    const theirs = container && !this.isOwned(container) ? container : undefined;
    const lock = mine ?? seen ?? theirs ?? null;
    // a refusal names the deep lock in the way when the case is not open
    const containerLock = theirs ?? (lock && !mine && keyOf(lock.lockable) !== key ? lock : null);
    const lost = this.lost.get(key);
    const waiter = mine ? undefined : this.waiting.get(key);
    let state: LockState = 'unlocked';
    if (mine) state = 'owned';
    else if (waiter) state = 'waiting';
    else if (lost) state = 'lost';
    else if (lock) state = this.isOwned(lock) ? 'owned' : 'locked';
    const line = this.options.findLine?.(key) ?? NO_WAITERS;
    const info: LockInfo = {
      state,
      lock,
      containerLock,
      holder: lock?.user ?? null,
      lostTo: state === 'lost' ? (lost?.lostTo ?? null) : null,
      lostReason: state === 'lost' ? (lost?.reason ?? null) : null,
      // the open case knows the whole line; without it, the position baton gave
      position: waiter ? (this.options.isOpen(waiter.caseId) ? positionIn(line, waiter) : waiter.position) : null,
      waiter: waiter ?? null,
      waiters: line,
      lineEnded: state === 'waiting' || state === 'owned' ? null : (this.lineEnded.get(key) ?? null),
    };
    // unchanged → the same object, so React skips the re-render
    const prev = this.last.get(key);
    const same =
      prev &&
      prev.state === info.state &&
      prev.lock === info.lock &&
      prev.containerLock === info.containerLock &&
      prev.lostTo === info.lostTo &&
      prev.lostReason === info.lostReason &&
      prev.position === info.position &&
      prev.waiter === info.waiter &&
      prev.lineEnded === info.lineEnded &&
      sameList(prev.waiters, info.waiters);
    const result = same ? prev : info;
    this.last.set(key, result);
    this.cache.set(key, result);
    return result;
  }

  /** Whether the lock is this tab's (state `owned`), and not one it released. */
  isOwned(lock: Lock): boolean {
    if (this.released.has(lock.token)) return false;
    return this.isThisTab(lock) || [...this.held.values()].some((l) => l.token === lock.token);
  }

  /** Whether this tab released (or is releasing) the lock with this token: it is never the tab's again. */
  isReleased(token: string): boolean {
    return this.released.has(token);
  }

  /** A lock or waiter of this tab: its session id, and its user when both are known. */
  private isThisTab(of: { sessionId?: string | null; user: User }): boolean {
    const me = this.options.userId?.() ?? null;
    return of.sessionId === this.options.sessionId() && (me === null || of.user.id === me);
  }

  /** Whether an acquire of the record is in flight (and not cancelled). */
  isPending(record: TargetRef): boolean {
    return (this.attempts.get(keyOf(record)) ?? []).some((a) => !a.cancelled);
  }

  /**
   * Runs a request that may grant the record's lock. When the tab releases
   * the record before it answers, the lock it brings is released on the
   * server (unless a newer acquire of this tab wants the same lock) and the
   * call rejects with CancelledError. When its answer is lost (no answer,
   * or none in time: the request may have reached baton), `GET
   * /locks/status` settles it: a lock of this tab there is adopted when the
   * tab still wants it (`settle` turns it into the answer), else released.
   */
  private async attempt<T>(
    record: TargetRef,
    request: () => Promise<T>,
    lockOf: (result: T) => Lock | null,
    settle: (status: LockStatus) => T | null,
  ): Promise<T> {
    const key = keyOf(record);
    let done = () => {};
    const attempt: Attempt = { cancelled: false, done: new Promise<void>((resolve) => (done = resolve)) };
    const list = this.attempts.get(key) ?? [];
    list.push(attempt);
    this.attempts.set(key, list);
    try {
      let result: T;
      try {
        result = await request();
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        const settled = await this.settleLost(record, attempt, settle);
        if (settled === null) throw attempt.cancelled ? new CancelledError(key) : error;
        result = settled;
      }
      if (!attempt.cancelled) return result;
      const lock = lockOf(result);
      const wanted = (this.attempts.get(key) ?? []).some((a) => a !== attempt && !a.cancelled) || (lock && this.held.get(key)?.token === lock.token);
      if (lock && !wanted) void this.letGo(lock.token, record).catch(() => {});
      throw new CancelledError(key);
    } finally {
      const left = (this.attempts.get(key) ?? []).filter((a) => a !== attempt);
      if (left.length) this.attempts.set(key, left);
      else this.attempts.delete(key);
      done();
      if (this.releasing.size === 0 && this.attempts.size === 0) this.wake();
    }
  }

  /**
   * An acquire whose answer was lost: what does baton say now? The answer
   * made from a lock of this tab (or null: nothing to adopt). When baton
   * cannot be asked either, the record is settled later: a lock of this
   * tab found on it is released.
   */
  private async settleLost<T>(record: TargetRef, attempt: Attempt, settle: (status: LockStatus) => T | null): Promise<T | null> {
    const key = keyOf(record);
    let status: LockStatus;
    try {
      status = await this.options.api.lockStatus(record);
    } catch {
      this.unwanted.set(key, record);
      this.settleLater();
      return null;
    }
    const lock = status.lock && this.isThisTab(status.lock) && !this.released.has(status.lock.token) ? status.lock : null;
    // the answer stands in for the lost one: a cancelled attempt releases what it brings, as always
    if (!attempt.cancelled || lock) return settle(status);
    return null;
  }

  /** Tries again, with backoff, to learn whether records whose acquire lost its answer are locked by this tab. */
  private settleLater(delay = this.retryDelay(0), tries = 0): void {
    if (this.settleTimer || this.disposed || this.unwanted.size === 0) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      void Promise.all(
        [...this.unwanted].map(async ([key, record]) => {
          const status = await this.options.api.lockStatus(record);
          if (this.unwanted.get(key) !== record) return;
          this.unwanted.delete(key);
          const lock = status.lock;
          if (lock && this.isThisTab(lock) && this.held.get(key)?.token !== lock.token && !this.isPending(record)) {
            await this.letGo(lock.token, record);
          }
        }),
      )
        .then(() => this.settleLater())
        .catch(() => this.settleLater(this.retryDelay(tries + 1), tries + 1));
    }, delay);
  }

  /** Cancels the record's acquires in flight; resolves when each is over (its late lock released). */
  private cancel(key: string): Promise<unknown> {
    const list = this.attempts.get(key) ?? [];
    for (const a of list) a.cancelled = true;
    return Promise.all(list.map((a) => a.done));
  }

  /**
   * Takes the lock (201), or renews it when this tab holds it already (200).
   * `depth: 'infinity'` locks a record with everything under it or a case
   * with everything in it (asked on a record this tab holds, it upgrades that lock).
   */
  acquire(record: TargetRef, options: Pick<LockOptions, 'depth'> = {}): Promise<Lock> {
    return this.take(record, { depth: options.depth });
  }

  /** "Edit anyway": takes the lock over from its holder in one step (with `depth: 'infinity'`, every lock inside too). */
  editAnyway(record: TargetRef, options: Pick<LockOptions, 'depth'> = {}): Promise<Lock> {
    return this.take(record, { takeover: true, depth: options.depth });
  }

  /**
   * Locks several records of one case, all or nothing (`POST /locks/batch`):
   * the locks in the order asked, or LockHeldError naming every lock in the
   * way (and then nothing was taken).
   */
  async lockMany(records: TargetRef[]): Promise<Lock[]> {
    try {
      const { data } = await this.options.api.lockMany(records);
      for (const lock of data.locks) this.adopt(lock);
      return data.locks;
    } catch (error) {
      if (error instanceof LockHeldError) this.learn(error.locks);
      throw error;
    }
  }

  /**
   * Takes the first of `candidates` nobody else holds (`POST /locks/claim`);
   * a retried claim gets the same record. NoneFreeError when all are held.
   */
  async claim(candidates: TargetRef[]): Promise<Lock> {
    try {
      const { data } = await this.options.api.claim(candidates);
      this.adopt(data);
      return data;
    } catch (error) {
      if (error instanceof NoneFreeError) this.learn(error.locks);
      throw error;
    }
  }

  /** Others' locks a refusal named: the open cases show them at once. */
  private learn(locks: Lock[]): void {
    for (const lock of locks) {
      this.refused.set(keyOf(lock.lockable), lock);
      this.options.onLock(lock);
    }
    this.changed();
  }

  /**
   * "Wait for it": takes the lock when the record is free (or renews this
   * tab's), else joins the record's line and resolves to the tab's waiter
   * (state `waiting`). The lock comes over the edits channel when the tab's
   * turn comes: state becomes `owned` by itself. Asking again keeps the place.
   */
  async wait(record: TargetRef): Promise<Lock | Waiter> {
    const { data } = await this.attempt(
      record,
      () => this.options.api.waitForLock(record),
      ({ data }) => (data.type === 'Lock' ? data : null),
      (status) => {
        const lock = status.lock && this.isThisTab(status.lock) ? status.lock : undefined;
        const place = lock ? undefined : status.waiters.find((w) => this.isThisTab(w));
        const found = lock ?? place;
        return found ? { status: 200, data: found, version: null } : null;
      },
    );
    if (data.type === 'Lock') this.adopt(data);
    else this.join(data);
    return data;
  }

  /** Leaves the record's line (`DELETE /waiters/:id`); a place already gone counts as left. */
  async leave(record: TargetRef): Promise<void> {
    const key = keyOf(record);
    const waiter = this.waiting.get(key);
    this.lineEnded.delete(key);
    if (!waiter) return this.changed();
    this.drop(key, waiter);
    try {
      await this.options.api.leaveLine(waiter.id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }

  /** Records this tab's place in a line (from a response, or found again after a reload). */
  join(waiter: Waiter): void {
    const key = keyOf(waiter.lockable);
    // the lock came over the channel before the answer that joined the line did
    if (this.held.has(key)) return;
    this.waiting.set(key, waiter);
    this.heldAt.set(key, ++this.clock);
    this.lineEnded.delete(key);
    this.lost.delete(key);
    this.options.onWaiter?.(waiter, false);
    this.changed();
    this.keepWaiting();
  }

  private drop(key: string, waiter: Waiter): void {
    this.waiting.delete(key);
    this.options.onWaiter?.(waiter, true);
    this.changed();
  }

  /** Whether this tab waits for the record. */
  isWaiting(record: TargetRef): boolean {
    return this.waiting.has(keyOf(record));
  }

  /**
   * A waiter left a line (its `destroy` frame). For this tab's own: `granted`
   * waits for the lock's `create`, which comes next in the same commit; any
   * other reason it did not ask for is kept as `lineEnded`.
   */
  waiterEnded(waiter: Waiter | EndedWaiter): void {
    const key = keyOf(waiter.lockable);
    const mine = this.waiting.get(key);
    if (!mine || mine.id !== waiter.id) return;
    const reason = waiterEnd(waiter);
    if (reason === 'granted') return;
    this.lineEnded.set(key, reason);
    this.drop(key, mine);
  }

  /**
   * Without an edits channel nothing renews this tab's waiters: refresh them
   * (`POST /waiters/:id/refresh`) while their case has none. A waiter that
   * is gone (404) was granted or ended: the record's status says which.
   */
  private keepWaiting(): void {
    if (this.refreshTimer || this.disposed || this.waiting.size === 0) return;
    const leases = [...this.waiting.values()].map((w) => Date.parse(w.expiresAt) - Date.now());
    const delay = Math.max(500, Math.min(...leases) / 3);
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void Promise.all([...this.waiting.values()].map((w) => this.renew(w))).finally(() => this.keepWaiting());
    }, delay);
  }

  private async renew(waiter: Waiter): Promise<void> {
    const key = keyOf(waiter.lockable);
    if (this.options.hasChannel?.(waiter.caseId)) return;
    try {
      const renewed = await this.options.api.refreshWaiter(waiter.id);
      if (this.waiting.get(key)?.id === waiter.id) this.waiting.set(key, renewed);
    } catch (error) {
      if (!(error instanceof NotFoundError) || this.waiting.get(key)?.id !== waiter.id) return;
      const status = await this.options.api.lockStatus(waiter.lockable).catch(() => null);
      if (this.waiting.get(key)?.id !== waiter.id) return;
      if (status?.lock && this.isThisTab(status.lock)) return this.adopt(status.lock);
      this.lineEnded.set(key, 'expired');
      this.drop(key, waiter);
    }
  }

  private async take(record: TargetRef, options: LockOptions): Promise<Lock> {
    try {
      const { data: lock } = await this.attempt(
        record,
        () => this.options.api.acquireLock(record, options),
        ({ data }) => data,
        (status) => (status.lock && this.isThisTab(status.lock) ? { status: 200, data: status.lock, version: null } : null),
      );
      // "Edit anyway" skips the line: the tab's own place in it ended
      const waiter = this.waiting.get(keyOf(record));
      if (waiter) this.options.onWaiter?.(waiter, true);
      this.adopt(lock);
      return lock;
    } catch (error) {
      if (error instanceof LockHeldError || error instanceof OutrankedError) {
        // the record's holder, or the deep lock it is inside; a deep lock asked for names every lock in it too
        this.refused.set(keyOf(record), error.lock);
        this.learn(error instanceof LockHeldError ? error.locks : [error.lock]);
      }
      throw error;
    }
  }

  /**
   * Releases this tab's lock on a record (a lock already gone counts as
   * released). An acquire of it still in flight loses: the lock it brings
   * is released on the server when it comes. Resolves once the first try
   * is answered (never waiting on that acquire): a try that fails on the
   * network is made again, with backoff, until baton confirms the release
   * or the lock is gone (`settled()` waits for that); meanwhile the lock is
   * not the tab's, and no snapshot makes it the tab's again.
   */
  async release(record: TargetRef): Promise<void> {
    const key = keyOf(record);
    this.lost.delete(key);
    this.refused.delete(key);
    void this.cancel(key);
    const lock = this.held.get(key);
    if (!lock) {
      this.changed();
      return;
    }
    this.held.delete(key);
    this.forgetActivity(key);
    this.options.onUnlock(lock);
    this.changed();
    await this.letGo(lock.token, lock.lockable);
  }

  /**
   * Releases a lock on the server: remembered as released at once (never
   * adopted again), tried again with backoff while the network fails, done
   * when baton confirms it (204) or says it is gone (404). Rejects only when
   * baton refuses for good (403).
   */
  private async letGo(token: string, lockable: TargetRef): Promise<void> {
    this.remember(token);
    const pending = this.releasing.get(token);
    if (pending) {
      // a try is on its way or waiting: make the next one now
      if (pending.timer) {
        clearTimeout(pending.timer);
        pending.timer = null;
        return this.tryRelease(token);
      }
      return;
    }
    this.releasing.set(token, { tries: 0, timer: null, lockable });
    return this.tryRelease(token);
  }

  private async tryRelease(token: string): Promise<void> {
    const pending = this.releasing.get(token);
    if (!pending || this.disposed) return;
    pending.tries++;
    try {
      await this.options.api.releaseLock(token);
    } catch (error) {
      if (error instanceof NotFoundError) return this.confirmed(token);
      if (!retryable(error)) {
        // refused for good (403: not this tab's to release): nothing to try again
        this.confirmed(token);
        throw error;
      }
      if (this.releasing.get(token) !== pending || this.disposed) return;
      pending.timer = setTimeout(() => {
        pending.timer = null;
        void this.tryRelease(token).catch(() => {});
      }, this.retryDelay(pending.tries - 1));
      return;
    }
    this.confirmed(token);
  }

  /** The server confirmed a release (or the lock is gone). */
  private confirmed(token: string): void {
    const pending = this.releasing.get(token);
    if (pending?.timer) clearTimeout(pending.timer);
    this.releasing.delete(token);
    if (this.releasing.size === 0 && this.attempts.size === 0) this.wake();
  }

  private remember(token: string): void {
    if (this.released.size >= RELEASED) {
      const oldest = this.released.values().next();
      if (!oldest.done) this.released.delete(oldest.value);
    }
    this.released.add(token);
  }

  private retryDelay(tries: number): number {
    const initial = this.options.retry?.initialDelay ?? 500;
    const max = this.options.retry?.maxDelay ?? 30_000;
    return Math.min(max, initial * 2 ** Math.min(tries, 30));
  }

  /** How many releases baton has not confirmed yet. */
  get unconfirmed(): number {
    return this.releasing.size;
  }

  /** Resolves when every release of this tab is confirmed and no acquire is in flight. */
  settled(): Promise<void> {
    if (this.releasing.size === 0 && this.attempts.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private wake(): void {
    for (const resolve of this.idle.splice(0)) resolve();
  }

  /**
   * The person typed in the record's form: renews the lock's activity
   * (`POST /locks/:id/refresh`) so a long draft is not released as idle —
   * at most once a minute, and only after input since the last renewal. A
   * form left untouched is released as idle all the same.
   */
  touch(record: TargetRef): void {
    const key = keyOf(record);
    const lock = this.held.get(key);
    if (!lock) return;
    const seen = this.activity.get(key) ?? { at: Date.now(), timer: null };
    this.activity.set(key, seen);
    if (seen.timer) return;
    const renew = () => {
      seen.timer = null;
      seen.at = Date.now();
      if (this.held.get(key)?.token === lock.token) void this.options.api.refreshLock(lock.token).catch(() => {});
    };
    const wait = seen.at + ACTIVITY_EVERY - Date.now();
    if (wait <= 0) renew();
    else seen.timer = setTimeout(renew, wait);
  }

  private forgetActivity(key: string): void {
    const seen = this.activity.get(key);
    if (seen?.timer) clearTimeout(seen.timer);
    this.activity.delete(key);
  }

  /** Releases every lock of this tab and leaves every line it is in (`DELETE /locks?session=mine`). */
  async releaseAll(keepalive = false): Promise<void> {
    const locks = [...this.held.values()];
    const waiters = [...this.waiting.values()];
    // the session's locks go in one request; what an acquire in flight brings is released by it
    for (const key of [...this.attempts.keys()]) void this.cancel(key);
    for (const key of [...this.activity.keys()]) this.forgetActivity(key);
    this.held.clear();
    this.lost.clear();
    this.waiting.clear();
    for (const lock of locks) {
      this.remember(lock.token);
      this.options.onUnlock(lock);
    }
    for (const waiter of waiters) this.options.onWaiter?.(waiter, true);
    this.changed();
    try {
      await this.options.api.releaseSessionLocks(keepalive);
    } catch (error) {
      // not confirmed: each lock is let go of on its own, and tried again until baton confirms it
      for (const lock of locks) void this.letGo(lock.token, lock.lockable).catch(() => {});
      throw error;
    }
    // every lock of the session is gone: nothing is left to try again
    for (const token of [...this.releasing.keys()]) this.confirmed(token);
  }

  /** Forgets a record's lock without asking the server (the record was deleted with it). */
  forget(record: TargetRef): void {
    const key = keyOf(record);
    const lock = this.held.get(key);
    const waiter = this.waiting.get(key);
    this.held.delete(key);
    this.lost.delete(key);
    this.refused.delete(key);
    this.waiting.delete(key);
    this.lineEnded.delete(key);
    if (lock) this.options.onUnlock(lock);
    if (waiter) this.options.onWaiter?.(waiter, true);
    this.changed();
  }

  /** Forgets that a lock was lost (the app has told the person). */
  dismiss(record: TargetRef): void {
    const key = keyOf(record);
    if (this.lost.delete(key) || this.lineEnded.delete(key)) this.changed();
  }

  /** Records a lock this tab holds (from a response, or found again after a reload). */
  adopt(lock: Lock): void {
    if (this.released.has(lock.token)) return;
    const key = keyOf(lock.lockable);
    this.refused.delete(key);
    this.unwanted.delete(key);
    if (this.held.get(key)?.token !== lock.token) this.forgetActivity(key);
    this.held.set(key, lock);
    this.heldAt.set(key, ++this.clock);
    this.lost.delete(key);
    this.waiting.delete(key);
    this.lineEnded.delete(key);
    this.options.onLock(lock);
    this.changed();
  }

  /** A lock ended; if it was this tab's and the tab did not end it, the lock is lost. */
  ended(lock: Lock | EndedLock): void {
    if (this.releasing.has(lock.token)) this.confirmed(lock.token);
    const key = keyOf(lock.lockable);
    const mine = this.held.get(key);
    if (!mine || mine.token !== lock.token) return;
    this.held.delete(key);
    const lostTo = 'overriddenBy' in lock ? (lock.overriddenBy ?? null) : null;
    this.lost.set(key, { lock: mine, lostTo, reason: endReason(lock) });
    this.changed();
  }

  /** A save was refused with `lock_lost`: the lock is gone. */
  lostOn(record: TargetRef): void {
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
  reconcile(caseId: number, active: Lock[], since: number, waiters: Waiter[] = []): void {
    const tokens = new Set(active.map((l) => l.token));
    const ids = new Set(waiters.map((w) => w.id));
    for (const [key, waiter] of this.waiting) {
      // gone from the line: granted (its lock is adopted below) or ended while the tab was away
      if (waiter.caseId !== caseId || ids.has(waiter.id) || (this.heldAt.get(key) ?? 0) > since) continue;
      this.waiting.delete(key);
      const now = active.find((l) => keyOf(l.lockable) === key);
      if (!now || !this.isThisTab(now)) this.lineEnded.set(key, 'expired');
    }
    for (const waiter of waiters) {
      const key = keyOf(waiter.lockable);
      if (this.isThisTab(waiter) && !this.waiting.has(key) && !this.held.has(key)) {
        this.waiting.set(key, waiter);
        this.heldAt.set(key, since);
        this.keepWaiting();
      }
    }
    for (const [key, lock] of this.held) {
      // a lock taken while the snapshot was on its way is not in it
      if (lock.caseId !== caseId || tokens.has(lock.token) || (this.heldAt.get(key) ?? 0) > since) continue;
      this.held.delete(key);
      const now = active.find((l) => keyOf(l.lockable) === key);
      this.lost.set(key, { lock, lostTo: now?.user ?? null, reason: now ? 'overridden' : 'disconnected' });
    }
    for (const lock of active) {
      const key = keyOf(lock.lockable);
      if (!this.isThisTab(lock) || this.held.has(key)) continue;
      if (this.released.has(lock.token)) {
        // a release not confirmed yet (the snapshot may predate it): never adopted; try again now
        if (this.releasing.has(lock.token)) void this.letGo(lock.token, lock.lockable).catch(() => {});
        continue;
      }
      if (this.unwanted.has(key) && !this.isPending(lock.lockable)) {
        // what an acquire whose answer was lost took, after the tab gave up on it
        this.unwanted.delete(key);
        void this.letGo(lock.token, lock.lockable).catch(() => {});
        continue;
      }
      this.held.set(key, lock);
      this.lost.delete(key);
      this.waiting.delete(key);
      this.heldAt.set(key, since);
    }
    this.changed();
  }

  /**
   * Releases the tab's locks and leaves its lines when the page goes away for good (`pagehide`
   * without the back/forward cache), with `keepalive` so the request outlives
   * the page. Returns a function that removes the listener.
   */
  releaseOnPageHide(target: EventTarget | undefined = typeof addEventListener === 'function' ? globalThis : undefined): () => void {
    if (!target || this.pageHide) return () => {};
    const handler = (event: Event) => {
      // going into the back/forward cache: the page may come back with its locks
      if ('persisted' in event && event.persisted) return;
      if (this.held.size === 0 && this.waiting.size === 0) return;
      void this.releaseAll(true).catch(() => {});
    };
    target.addEventListener('pagehide', handler);
    this.pageHide = () => {
      target.removeEventListener('pagehide', handler);
      this.pageHide = null;
    };
    return this.pageHide;
  }

  /** Stops listening for `pagehide` and refreshing waiters. */
  dispose(): void {
    this.pageHide?.();
    this.disposed = true;
    for (const key of [...this.activity.keys()]) this.forgetActivity(key);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    for (const pending of this.releasing.values()) if (pending.timer) clearTimeout(pending.timer);
    this.releasing.clear();
    this.wake();
  }
}
