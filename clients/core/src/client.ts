import { Api, type ParentRef } from './api.js';
import { KickedError, type Backoff, type NetworkSignals, type WebSocketConstructor } from './channel.js';
import { DraftStore } from './drafts.js';
import { LockLostError, StaleVersionError, UnauthorizedError } from './errors.js';
import { Transport, type FetchLike } from './http.js';
import { LiveCase } from './live.js';
import { LockManager } from './locks.js';
import { TabSession, type BroadcastConstructor, type SessionStore } from './session.js';
import { keyOf } from './store.js';
import type { Schema } from './schema.js';
import type { Fields, Identity, RecordKey, RecordMap, TargetRef, User } from './types.js';

export interface BatonClientOptions {
  /** baton's address, e.g. `https://baton.example.com`; same origin when omitted. */
  baseUrl?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: FetchLike;
  /** A WebSocket implementation (default: the global one; in Node 20 pass `ws`). */
  WebSocket?: WebSocketConstructor;
  /** Where the tab keeps its session id (default: `sessionStorage`). */
  storage?: SessionStore;
  /** Use this session id instead of the stored one. */
  sessionId?: string;
  /** A token from an earlier sign-in. */
  token?: string | null;
  /**
   * Where a fresh token comes from (your sign-in: a refresh, or asking the
   * person again). Asked after a 401 (the request is tried once more with a
   * different token), before every reconnect of an edits channel, shortly
   * before the token's `exp`, and after a `kicked` frame with reason
   * `signed_out`; a token it gives that differs from the current one is
   * used from then on, and the channels reconnect with it, keeping the
   * tab's locks and drafts. `null`, or the same token, means none: the kit
   * carries on as without it (signed out on a 401). See `TokenRequest`.
   */
  getToken?: (request: TokenRequest) => Promise<string | null> | string | null;
  /** How long a REST call may take, answer included, before it fails with TimeoutError (ms; default 10 000). */
  timeout?: number;
  /** A `BroadcastChannel` implementation for telling a duplicated tab apart (default: the global one; `null`: none). */
  broadcast?: BroadcastConstructor | null;
  /** Reconnect delays of the edits channel. */
  backoff?: Backoff;
  /** Where the edits channels hear `online` and `visibilitychange` (default: the browser's window and document). */
  signals?: NetworkSignals;
  /** The source of the reconnect jitter (default `Math.random`). */
  random?: () => number;
  /**
   * How long a case stays open after its last handle closed, in ms (default
   * 0): reopening it meanwhile keeps its connection (React's StrictMode and
   * quick navigation close and reopen at once).
   */
  closeDelay?: number;
  /** Release the tab's locks and leave its lines on `pagehide` (default: true where there is a window). */
  releaseOnPageHide?: boolean;
  /** Ask before the page is left or reloaded while a draft has changes (`beforeunload`; default: true where there is a window). */
  askBeforeUnload?: boolean;
  /**
   * The case (its slug) that records of external types (`store: "external"`,
   * kept in a host's own database) are in: lock requests on them carry it as
   * `case`. Default: the case a record names as `case`, else the open case
   * that knows the record, else the only open case.
   */
  case?: string;
}

type Saveable = RecordKey & Identity & { version?: number; slug?: unknown };

/**
 * Why the kit asks for a token: `refused` (baton answered 401 to `refused`),
 * `reconnect` (an edits channel is about to reconnect: the current token is
 * fine if it is still good), `expiring` (the current token's `exp` is
 * near) or `signed_out` (baton closed a channel because the token ended).
 */
export interface TokenRequest {
  reason: 'refused' | 'reconnect' | 'expiring' | 'signed_out';
  /** The token in use when asked. */
  current: string | null;
}

/** A token's `exp` and `iat` (seconds since the epoch), when it has them. */
export function tokenTimes(token: string | null): { exp: number | null; iat: number | null } {
  const payload = tokenPayload(token);
  const num = (key: string) => (payload && key in payload && typeof payload[key] === 'number' ? payload[key] : null);
  return { exp: num('exp'), iat: num('iat') };
}

function tokenPayload(token: string | null): Record<string, unknown> | null {
  const payload = token?.split('.')[1];
  if (!payload || typeof atob !== 'function') return null;
  try {
    const json: unknown = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
    return json && typeof json === 'object' ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The case a record belongs to: a case is its own, every other record says so in `caseId`. */
function caseIdOf(record: Identity): number | undefined {
  if (record.type === 'Case') return record.id;
  return 'caseId' in record && typeof record.caseId === 'number' ? record.caseId : undefined;
}

interface Entry<R extends RecordMap> {
  live: LiveCase<R>;
  refs: number;
  closing: ReturnType<typeof setTimeout> | null;
}

/** The user id a token names (its `sub`), or null when it cannot be read. */
export function tokenUserId(token: string | null): number | null {
  const payload = tokenPayload(token);
  const sub = payload && 'sub' in payload ? Number(payload.sub) : NaN;
  return Number.isSafeInteger(sub) ? sub : null;
}

/** How long before a token's `exp` the kit asks for a fresh one: a fifth of its life, at most a minute. */
function renewalMargin(exp: number, iat: number | null): number {
  const life = iat !== null && iat < exp ? (exp - iat) * 1000 : 5 * 60_000;
  return Math.min(60_000, life / 5);
}

/** A handle on an open case; `close()` when done with it. */
export interface CaseHandle<R extends RecordMap = RecordMap> {
  live: LiveCase<R>;
  close(): void;
}

/** Where a record moves: a record of its parent type in the same case, and its position there (last when omitted). */
export interface MoveTarget {
  parentId: number | string;
  position?: number;
}

/**
 * The client of one browser tab: its session id and token, the REST API, the
 * open cases, and the tab's locks. `R` maps each declared type's name to its
 * record type (`RecordsOf<components>` of a generated document); by default
 * every type is an `AnyRecord`.
 */
export class BatonClient<R extends RecordMap = RecordMap> {
  readonly api: Api;
  readonly locks: LockManager;
  /** The tab's drafts, by record: what people typed and have not saved. */
  readonly drafts: DraftStore;
  private token: string | null;
  /** The signed-in user's id: from the sign-in, else from the token. */
  private userId: number | null;
  private readonly transport: Transport;
  private readonly cases = new Map<string, Entry<R>>();
  private readonly authListeners = new Set<(error: UnauthorizedError) => void>();
  private readonly session: TabSession;
  /** Asks for a fresh token in flight, by reason: concurrent asks share one. */
  private readonly renewing = new Map<TokenRequest['reason'], Promise<string | null>>();
  private renewTimer: ReturnType<typeof setTimeout> | null = null;
  private disposed = false;
  /** The token each open case's channel last connected with. */
  private readonly channelTokens = new Map<string, string | null>();
  private stopAsking: (() => void) | null = null;

  constructor(private readonly options: BatonClientOptions = {}) {
    this.session = new TabSession({ storage: options.storage, id: options.sessionId, broadcast: options.broadcast });
    this.token = options.token ?? null;
    this.userId = tokenUserId(this.token);
    const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (!fetchImpl) throw new Error('baton: no fetch implementation; pass one as `fetch`');
    this.transport = new Transport({
      baseUrl: options.baseUrl ?? '',
      fetch: fetchImpl,
      sessionId: () => this.session.id,
      ready: () => (this.session.settled ? undefined : this.session.ready),
      token: () => this.token,
      renewToken: options.getToken ? (refused) => this.renewToken('refused', refused) : undefined,
      onUnauthorized: (error) => this.unauthorized(error),
      timeout: options.timeout,
    });
    this.api = new Api(this.transport, (record) => this.caseOf(record));
    this.locks = new LockManager({
      api: this.api,
      sessionId: () => this.session.id,
      retry: options.backoff,
      userId: () => this.userId,
      findLock: (key) => {
        for (const { live } of this.cases.values()) {
          const lock = live.store.getView().lockOn[key];
          if (lock) return lock;
        }
        return undefined;
      },
      findContainerLock: (key) => {
        for (const { live } of this.cases.values()) {
          const lock = live.store.getView().containerLockOn[key];
          if (lock) return lock;
        }
        return undefined;
      },
      onLock: (lock) => this.storesOf(lock.caseId).forEach((s) => s.store.upsert(lock)),
      onUnlock: (lock) => this.storesOf(lock.caseId).forEach((s) => s.store.remove(lock)),
      isOpen: (caseId) => this.storesOf(caseId).some((live) => live.status !== 'stopped'),
      findLine: (key) => {
        for (const { live } of this.cases.values()) {
          const line = live.store.getView().lineOn[key];
          if (line) return line;
        }
        return [];
      },
      onWaiter: (waiter, gone) =>
        this.storesOf(waiter.caseId).forEach((s) => (gone ? s.store.remove(waiter) : s.store.upsert(waiter))),
      hasChannel: (caseId) => this.storesOf(caseId).some((live) => live.status === 'live'),
    });
    if (options.releaseOnPageHide ?? true) this.locks.releaseOnPageHide();
    // typing is activity: a long draft keeps its lock
    this.drafts = new DraftStore({ onInput: (record) => this.locks.touch(record) });
    if (options.askBeforeUnload ?? true) this.stopAsking = this.drafts.askBeforeUnload();
    this.scheduleRenewal();
  }

  /**
   * The tab's session id. Made once per tab and kept in `sessionStorage`; a
   * duplicated tab (which copies it) takes a new one within `ready()`.
   */
  get sessionId(): string {
    return this.session.id;
  }

  /** Resolves once the tab's session id is settled (requests and channels wait for it). */
  ready(): Promise<void> {
    return this.session.ready;
  }

  get signedIn(): boolean {
    return this.token !== null;
  }

  getToken(): string | null {
    return this.token;
  }

  setToken(token: string | null): void {
    this.token = token;
    this.userId = tokenUserId(token) ?? (token === null ? null : this.userId);
    this.scheduleRenewal();
  }

  /**
   * Asks `getToken` for a fresh token. A different one is used from then
   * on; with `reconnect`, the open channels reconnect with it (their tabs
   * keep their locks through the server's disconnect grace). Resolves to
   * the new token, or null when there is none.
   */
  private renewToken(reason: TokenRequest['reason'], current: string | null = this.token, reconnect = reason !== 'reconnect'): Promise<string | null> {
    const getToken = this.options.getToken;
    if (!getToken) return Promise.resolve(null);
    const asking = this.renewing.get(reason);
    if (asking) return asking;
    const answer = (async () => {
      try {
        const token = await getToken({ reason, current });
        if (!token || token === current || this.disposed) return null;
        const was = this.token;
        this.setToken(token);
        if (reconnect && was !== token) for (const { live } of this.cases.values()) live.reconnect();
        return token;
      } finally {
        this.renewing.delete(reason);
      }
    })();
    this.renewing.set(reason, answer);
    return answer;
  }

  /**
   * A channel was kicked: with reason `signed_out` (its token ended), a
   * fresh token from `getToken` (asked once) carries it on; anything else
   * stops it as usual.
   */
  private async recover(slug: string, kicked: KickedError): Promise<boolean> {
    if (kicked.reason !== 'signed_out') return false;
    const used = this.channelTokens.get(slug) ?? null;
    // another channel already found a fresh token
    if (this.token !== null && this.token !== used) return true;
    return (await this.renewToken('signed_out', used, false).catch(() => null)) !== null;
  }

  /** Asks for a fresh token shortly before the current one's `exp` (with `getToken` only). */
  private scheduleRenewal(): void {
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
    if (!this.options.getToken || this.disposed) return;
    const { exp, iat } = tokenTimes(this.token);
    if (exp === null) return;
    const delay = Math.max(0, exp * 1000 - renewalMargin(exp, iat) - Date.now());
    // timers are 32-bit: a far `exp` is looked at again later
    const timer = setTimeout(() => {
      this.renewTimer = null;
      if (Date.now() < exp * 1000 - renewalMargin(exp, iat) - 1000) return this.scheduleRenewal();
      void this.renewToken('expiring').catch(() => null);
    }, Math.min(delay, 2 ** 31 - 1));
    (timer as { unref?: () => void }).unref?.();
    this.renewTimer = timer;
  }

  /** The signed-in user's id, when known (from the sign-in or the token). */
  get currentUserId(): number | null {
    return this.userId;
  }

  /** Signs in; the token is kept for every later request. */
  async login(email: string, password: string): Promise<User> {
    const { token, user } = await this.api.login(email, password);
    this.setToken(token);
    this.userId = user.id;
    return user;
  }

  /** Signs out: the token stops working, open cases close. */
  async logout(): Promise<void> {
    try {
      await this.api.logout();
    } finally {
      this.setToken(null);
      this.userId = null;
      this.closeAll();
    }
  }

  /** Told when the token is refused (expired, revoked, signed out elsewhere). */
  onAuthError(listener: (error: UnauthorizedError) => void): () => void {
    this.authListeners.add(listener);
    return () => {
      this.authListeners.delete(listener);
    };
  }

  private unauthorized(error: UnauthorizedError): void {
    if (this.token === null) return;
    for (const { live } of [...this.cases.values()]) live.stop(error);
    for (const listener of [...this.authListeners]) listener(error);
  }

  /** The edits channel's address for a case. */
  channelUrl(slug: string): string {
    let base = this.transport.baseUrl;
    if (!/^https?:/i.test(base)) {
      const origin = typeof location === 'undefined' ? '' : location.origin;
      base = origin + base;
    }
    this.channelTokens.set(slug, this.token);
    const query = new URLSearchParams({ token: this.token ?? '', sessionId: this.sessionId });
    return `${base.replace(/^http/i, 'ws')}/cases/${encodeURIComponent(slug)}/edits?${query}`;
  }

  /**
   * Opens a case: loads it and keeps it live. Opening the same case again
   * shares the connection; each handle is closed once.
   */
  openCase(slug: string): CaseHandle<R> {
    let entry = this.cases.get(slug);
    if (entry?.closing) {
      clearTimeout(entry.closing);
      entry.closing = null;
    }
    if (!entry || entry.live.status === 'stopped') {
      const live = new LiveCase<R>({
        slug,
        api: this.api,
        locks: this.locks,
        sessionId: () => this.session.id,
        ready: this.session.settled ? undefined : this.session.ready,
        userId: () => this.userId,
        beforeReconnect: this.options.getToken ? () => this.renewToken('reconnect').then(() => {}) : undefined,
        // the token ended (`signed_out`): a fresh one carries the tab on, locks, drafts and all
        recover: this.options.getToken ? (kicked) => this.recover(slug, kicked) : undefined,
        signals: this.options.signals,
        random: this.options.random,
        onStop: (_live, error) => {
          // the token ended: the whole client is signed out, not just this case
          if (error instanceof KickedError && error.reason === 'signed_out') {
            this.unauthorized(new UnauthorizedError('signed_out', 401, error.message));
          }
        },
        channelUrl: (s) => this.channelUrl(s),
        // sound: the browser's WebSocket calls the channel's handlers with events that have the `data`, `code` and `reason` it reads
        WebSocket: this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket,
        backoff: this.options.backoff,
      });
      entry = { live, refs: 0, closing: null };
      this.cases.set(slug, entry);
      live.start();
    }
    const current = entry;
    current.refs++;
    let closed = false;
    return {
      live: current.live,
      close: () => {
        if (closed) return;
        closed = true;
        if (--current.refs > 0) return;
        const end = () => {
          current.closing = null;
          if (current.refs > 0) return;
          current.live.stop();
          if (this.cases.get(slug) === current) this.cases.delete(slug);
        };
        const delay = this.options.closeDelay ?? 0;
        if (delay > 0) current.closing = setTimeout(end, delay);
        else end();
      },
    };
  }

  /** The case open under a slug (its LiveCase), or null: `openCase` opens one. */
  openedCase(slug: string): LiveCase<R> | null {
    return this.cases.get(slug)?.live ?? null;
  }

  /** Closes every open case. */
  closeAll(): void {
    for (const entry of this.cases.values()) {
      if (entry.closing) clearTimeout(entry.closing);
      entry.live.stop();
    }
    this.cases.clear();
  }

  /** Closes the client: open cases, the `pagehide` listener, the session's answers to other tabs. */
  dispose(): void {
    this.disposed = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
    this.closeAll();
    this.locks.dispose();
    this.session.dispose();
    this.stopAsking?.();
  }

  /** The slug of the case a record of an external type is in (see `BatonClientOptions.case`). */
  private caseOf(record: TargetRef & { case?: unknown; caseId?: unknown }): string | undefined {
    if (typeof record.case === 'string') return record.case;
    if (this.options.case) return this.options.case;
    const open = [...this.cases.values()].map((e) => e.live);
    const key = keyOf(record);
    const knows = open.filter((live) => {
      const view = live.store.getView();
      return (view.case && view.case.id === record.caseId) || live.store.get(key) || view.lockOn[key] || view.lineOn[key];
    });
    return (knows.length ? knows : open).length === 1 ? (knows[0] ?? open[0])?.slug : undefined;
  }

  private storesOf(caseId: number): LiveCase<R>[] {
    return [...this.cases.values()]
      .map((e) => e.live)
      .filter((live) => live.store.getView().case?.id === caseId);
  }

  private known(record: Saveable): void {
    const caseId = caseIdOf(record);
    if (caseId !== undefined) this.storesOf(caseId).forEach((live) => live.store.upsert(record));
  }

  /** The record types in force (`GET /schema`, asked once). */
  schema(): Promise<Schema> {
    return this.api.schema();
  }

  /**
   * Saves attributes of a lockable record. Sends `If-Match` with the version
   * of the record given (the one the person edited) and `Lock-Token` when
   * the tab holds its lock; the saved record goes into the open cases.
   */
  async save<T extends Saveable>(record: T, attrs: Partial<T>): Promise<T> {
    try {
      const { data } = await this.api.update<T>(record, attrs, this.guard(record));
      return this.keep(data);
    } catch (error) {
      this.refused(record, error);
      throw error;
    }
  }

  /**
   * Moves a record of a movable type to another parent of its case, at
   * `position` (last when omitted): `PATCH /tickets/:id {ticket: {projectId,
   * position}}`, guarded like a save (`Lock-Token` when the tab holds its
   * lock). LockedError while someone else holds it, or the source or target
   * parent (or the case) deeply.
   */
  async move<T extends Saveable>(record: T, to: MoveTarget): Promise<T> {
    const key = (await this.schema()).parentKey(record.type);
    if (!key) throw new TypeError(`baton: ${record.type} records are not under another record`);
    const { parentId, position } = to;
    const attrs: Fields = position === undefined ? { [key]: parentId } : { [key]: parentId, position };
    // sound: the parent key and `position` are the record's own attributes, by the schema
    return this.save(record, attrs as Partial<T>);
  }

  /** Deletes a lockable record (and everything under it), guarded like a save. */
  async destroy(record: Saveable): Promise<void> {
    try {
      await this.api.remove(record, this.guard(record));
      this.storesOf(caseIdOf(record) ?? -1).forEach((live) => live.store.remove(record));
      this.locks.forget(record);
    } catch (error) {
      this.refused(record, error);
      throw error;
    }
  }

  /**
   * Creates a record of a declared type under its parent (a case, or a
   * record of the parent type); it goes into the open case at once (its
   * echo is dropped).
   */
  async create<K extends keyof R & string>(type: K, parent: ParentRef, fields: Partial<R[K]>): Promise<R[K]> {
    return this.keep(await this.api.create<R[K]>(type, parent, fields));
  }

  private keep<T extends Saveable>(record: T): T {
    this.known(record);
    return record;
  }

  private guard(record: Saveable): { ifMatch: number | null; lockToken: string | null } {
    let version = record.version;
    if (typeof version !== 'number') {
      for (const { live } of this.cases.values()) {
        const seen = live.store.get(keyOf(record));
        if (seen && 'version' in seen && typeof seen.version === 'number') version = seen.version;
      }
    }
    return { ifMatch: version ?? null, lockToken: this.locks.tokenFor(record) };
  }

  private refused(record: TargetRef, error: unknown): void {
    if (error instanceof LockLostError) this.locks.lostOn(record);
    if (error instanceof LockLostError || error instanceof StaleVersionError) this.known(error.current);
  }
}
