import type { Api } from './api.js';
import { EditsChannel, type Backoff, type ChannelStatus, type KickedError, type NetworkSignals, type WebSocketConstructor } from './channel.js';
import { BatonError, NetworkError, NotFoundError, isFatal } from './errors.js';
import { waiterIn } from './line.js';
import { endReason, type LockManager } from './locks.js';
import { CaseStore, lockIn, type CaseView, type Listener } from './store.js';
import type { ChangeFrame, RecordMap, ServerFrame } from './types.js';

export type LiveStatus = 'loading' | 'live' | 'reconnecting' | 'stopped';

/** A case's data and presence, kept live by its edits channel. */
export interface LiveState<R extends RecordMap = RecordMap> extends CaseView<R> {
  status: LiveStatus;
  /** Why the case stopped: `UnauthorizedError`, `NotFoundError` (deleted), `KickedError`, … */
  error: BatonError | null;
}

export interface LiveCaseOptions {
  slug: string;
  api: Api;
  locks: LockManager;
  /** The tab's session id (read each time: a duplicated tab takes a new one at start). */
  sessionId: () => string;
  /** Resolves once the session id is settled: the channel connects after it. */
  ready?: Promise<void>;
  /** Runs before every reconnect of the channel (a fresh token). */
  beforeReconnect?: () => Promise<void>;
  /** A `kicked` frame: true to reconnect and resync instead of stopping. */
  recover?: (error: KickedError) => Promise<boolean>;
  /** The signed-in user's id, when known: a tab is its user and its session id together. */
  userId?: () => number | null;
  channelUrl: (slug: string) => string;
  WebSocket: WebSocketConstructor | undefined;
  backoff?: Backoff;
  /** Where the channel hears `online` and `visibilitychange` (default: the browser's). */
  signals?: NetworkSignals;
  /** The backoff's jitter source (tests make it fixed). */
  random?: () => number;
  onStop?: (live: LiveCase, error: BatonError | null) => void;
}

/**
 * One open case: loads it, listens to its edits channel, drops the tab's own
 * echoes, refetches on every (re)connect and `resync`, and stops for good
 * when the tab is kicked, signed out, or the case is deleted.
 */
export class LiveCase<R extends RecordMap = RecordMap> {
  readonly slug: string;
  readonly store = new CaseStore<R>();
  status: LiveStatus = 'loading';
  error: BatonError | null = null;
  private channel: EditsChannel | null = null;
  /** Frames that arrive while a fetch is in flight, applied after it. */
  private pending: ChangeFrame[] | null = null;
  private fetching: Promise<void> | null = null;
  /** A refetch was asked for while one was in flight: run one more after it (its snapshot may predate what was lost). */
  private again = false;
  private listeners = new Set<Listener>();
  private changeListeners = new Set<(frame: ChangeFrame) => void>();
  private state: LiveState<R> | null = null;
  private view: CaseView<R> | null = null;

  constructor(private readonly options: LiveCaseOptions) {
    this.slug = options.slug;
    this.store.subscribe(this.changed);
  }

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Told of every change another tab made (the tab's own echoes are dropped before). */
  onChange(listener: (frame: ChangeFrame) => void): () => void {
    this.changeListeners.add(listener);
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  /** Resolves once the case is loaded and live; rejects with the error if it stops first. */
  ready(): Promise<LiveState<R>> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.status === 'live' || (this.status !== 'stopped' && !this.channel && this.store.getView().case)) {
          resolve(this.getState());
          return true;
        }
        if (this.status === 'stopped') {
          reject(this.error ?? new BatonError('stopped', 0, `The case ${this.slug} was closed`));
          return true;
        }
        return false;
      };
      if (check()) return;
      const off = this.subscribe(() => {
        if (check()) off();
      });
    });
  }

  /** Drops the channel and reconnects now (e.g. on the browser's `online` event). */
  reconnect(): void {
    this.channel?.reconnect();
  }

  private changed = (): void => {
    this.state = null;
    this.options.locks.changed();
    for (const listener of [...this.listeners]) listener();
  };

  /** The current state; the same object until something changes. */
  getState = (): LiveState<R> => {
    const view = this.store.getView();
    if (this.state && this.view === view) return this.state;
    this.view = view;
    this.state = { ...view, status: this.status, error: this.error };
    return this.state;
  };

  private setStatus(status: LiveStatus, error: BatonError | null = this.error): void {
    if (this.status === status && this.error === error) return;
    this.status = status;
    this.error = error;
    this.changed();
  }

  start(): void {
    const { WebSocket } = this.options;
    if (!WebSocket) {
      // no WebSocket implementation: a one-off load, no live updates
      void this.refetch().catch((error: unknown) => this.stop(error instanceof BatonError ? error : null));
      return;
    }
    this.channel = new EditsChannel({
      url: () => this.options.channelUrl(this.slug),
      WebSocket,
      backoff: this.options.backoff,
      signals: this.options.signals,
      random: this.options.random,
      onFrame: this.onFrame,
      onStatus: (status: ChannelStatus) => {
        if (status === 'reconnecting' && this.status !== 'stopped') this.setStatus('reconnecting');
      },
      onStop: (error) => this.stop(error),
      check: () => this.refetch(),
      beforeReconnect: this.options.beforeReconnect,
      recover: this.options.recover,
    });
    const channel = this.channel;
    // a duplicated tab's session id is settled first: its channel is its own
    if (this.options.ready) void this.options.ready.then(() => this.channel === channel && channel.start());
    else channel.start();
  }

  /** Closes the channel; the store keeps its last data. */
  stop(error: BatonError | null = null): void {
    if (this.status === 'stopped') return;
    this.setStatus('stopped', error);
    const channel = this.channel;
    this.channel = null;
    channel?.stop(error);
    this.options.onStop?.(this, error);
  }

  /** Reloads the case over REST and makes it the truth (frames that arrive meanwhile are applied after). */
  refetch(): Promise<void> {
    if (this.fetching) {
      this.again = true;
      return this.fetching;
    }
    this.again = false;
    this.pending = [];
    this.fetching = (async () => {
      try {
        const since = this.options.locks.mark();
        const asked = this.store.mark();
        const [schema, detail] = await Promise.all([this.options.api.schema(), this.options.api.case(this.slug)]);
        this.store.setSchema(schema);
        // locks this tab let go are not shown again (a snapshot taken before the release still has them)
        const activeLocks = this.kept(detail.activeLocks);
        this.store.reset({ ...detail, activeLocks }, asked);
        this.options.locks.reconcile(detail.id, detail.activeLocks, since, detail.waiters);
        const pending = this.pending ?? [];
        this.pending = null;
        for (const frame of pending) this.applyChange(frame);
        if (this.channel?.status === 'open') {
          // in step again: only now does the channel's backoff start over
          this.channel.resynced();
          this.setStatus('live');
        }
      } catch (error) {
        this.pending = null;
        if (isFatal(error)) this.stop(error);
        throw error instanceof BatonError ? error : new NetworkError(String(error), error);
      } finally {
        this.fetching = null;
        if (this.again && this.status !== 'stopped') {
          void this.refetch().catch((error: unknown) => this.channel?.failed(error));
        }
      }
    })();
    return this.fetching;
  }

  private onFrame = (frame: ServerFrame): void => {
    switch (frame.type) {
      case 'welcome':
        this.store.setLocks(this.kept(frame.activeLocks), frame.waiters);
        this.store.setOnlineUsers(frame.onlineUsers);
        this.resync();
        return;
      case 'presence':
        this.store.setOnlineUsers(frame.onlineUsers);
        return;
      case 'resync':
        this.resync();
        return;
      case 'create':
      case 'update':
      case 'destroy':
        if (this.pending) this.pending.push(frame);
        else this.applyChange(frame);
        return;
    }
  };

  /** The locks of a snapshot without those this tab released or is releasing. */
  private kept<L extends { token: string }>(locks: L[]): L[] {
    const { locks: manager } = this.options;
    return locks.some((l) => manager.isReleased(l.token)) ? locks.filter((l) => !manager.isReleased(l.token)) : locks;
  }

  /** Refetches; a failure drops the connection and tries again after the backoff, never at once. */
  private resync(): void {
    void this.refetch().catch((error: unknown) => this.channel?.failed(error));
  }

  /** Whether a lock, a waiter or a frame's editor is this tab: its session id, and its user when both are known. */
  private isThisTab(sessionId: string | null | undefined, userId: number | null | undefined): boolean {
    if (sessionId !== this.options.sessionId()) return false;
    const me = this.options.userId?.() ?? null;
    return me === null || userId === null || userId === undefined || userId === me;
  }

  private applyChange(frame: ChangeFrame): void {
    const record = frame.watchable;
    const { locks } = this.options;
    const lock = lockIn(record);
    const ended = frame.type === 'destroy' ? lock : null;
    const waiter = waiterIn(record);
    const ownLockEnded = ended !== null && endReason(ended) !== 'released' && locks.tokenFor(ended.lockable) === ended.token;
    // a lock created for this tab that it did not take itself: handed over from the line
    const granted =
      frame.type === 'create' && lock !== null && this.isThisTab(lock.sessionId, lock.user.id) && locks.tokenFor(lock.lockable) !== lock.token;
    // The tab's own edits are applied from their responses already. What its
    // action did to other tabs is news to it: the lock it released handed to
    // the next waiter (that waiter's `destroy`, the new lock's `create`).
    const about = lock ?? waiter;
    const aboutOthers = about !== null && (!this.isThisTab(about.sessionId, about.user.id) || (waiter !== null && frame.type === 'destroy'));
    // the tab's own echo only when both its session id and its user are the frame's editor
    const echo = this.isThisTab(frame.editorSessionId, frame.editorUserId) && !ownLockEnded;
    if (echo && !aboutOthers && !(granted && locks.isWaiting(lock.lockable))) return;
    if (ended) locks.ended(ended);
    if (waiter && frame.type === 'destroy') locks.waiterEnded(waiter);
    if (granted) locks.adopt(lock);
    this.store.apply(frame);
    if (!echo) for (const listener of [...this.changeListeners]) listener(frame);
    if (record.type === 'Case' && frame.type === 'destroy') {
      this.stop(new NotFoundError('not_found', 404, `The case ${this.slug} was deleted`));
    }
  }
}
