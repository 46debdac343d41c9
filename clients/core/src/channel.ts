import { BatonError, isFatal } from './errors.js';
import type { KickReason, ServerFrame } from './types.js';
import { fromWire } from './wire.js';

/** The part of the WebSocket API the channel uses (browsers' and the `ws` package's both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface Backoff {
  /** First retry delay in ms (default 500). */
  initialDelay?: number;
  /** Longest delay in ms (default 30 000). */
  maxDelay?: number;
  /** How long a connection may take to be welcomed before it is given up and tried again, in ms (default 10 000). */
  connectTimeout?: number;
}

export type ChannelStatus = 'connecting' | 'open' | 'reconnecting' | 'stopped';

/** Where the channel hears that the network or the page's visibility changed (a window and its document). */
export interface NetworkSignals {
  /** Fires `online` (default: the global `window`, where there is one). */
  network?: EventTarget;
  /** Fires `visibilitychange` and has `visibilityState` (default: the global `document`). */
  page?: EventTarget & { visibilityState?: string };
}

export interface ChannelOptions {
  url: () => string;
  WebSocket: WebSocketConstructor;
  backoff?: Backoff;
  /** A frame the client knows; unknown ones (and `pong`) are dropped before this. */
  onFrame: (frame: ServerFrame) => void;
  onStatus?: (status: ChannelStatus) => void;
  /** The channel gave up: kicked, signed out, the case is gone. */
  onStop?: (error: BatonError | null) => void;
  /**
   * Asked after a connection attempt failed or dropped: rejects with a fatal
   * error (401, 403, 404) to stop, resolves to keep retrying. Browsers do not
   * say why a WebSocket handshake failed, so the client asks over REST.
   */
  check?: () => Promise<void>;
  /** The source of the backoff's jitter, in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Where to listen for `online` and `visibilitychange` (default: the browser's window and document). */
  signals?: NetworkSignals;
  /** Runs before every reconnect (not the first connect), e.g. to fetch a fresh token for the channel's URL. */
  beforeReconnect?: () => Promise<void>;
  /**
   * A `kicked` frame came: resolves true to reconnect (e.g. a fresh token
   * was found after `signed_out`), false to stop for good as usual.
   */
  recover?: (error: KickedError) => Promise<boolean>;
}

const KNOWN: ReadonlySet<string> = new Set<ServerFrame['type']>(['welcome', 'create', 'update', 'destroy', 'presence', 'resync', 'kicked', 'pong']);

/** Parses a text frame; null for anything the client does not know. */
export function parseFrame(data: unknown): ServerFrame | null {
  let frame: unknown;
  try {
    frame = JSON.parse(typeof data === 'string' ? data : String(data));
  } catch {
    return null;
  }
  // the `type` tag decides which frame it is; the rest is what the document says
  return frame && typeof frame === 'object' && 'type' in frame && typeof frame.type === 'string' && KNOWN.has(frame.type)
    ? fromWire<ServerFrame>(frame)
    : null;
}

/** Exponential backoff with jitter: half the step fixed, half random. */
export function backoffDelay(attempt: number, backoff: Backoff = {}, random = Math.random): number {
  const initial = backoff.initialDelay ?? 500;
  const max = backoff.maxDelay ?? 30_000;
  const step = Math.min(max, initial * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + random() * (step / 2));
}

const KICKED_TEXT: Record<string, string> = {
  kicked: 'An administrator closed this tab',
  access_removed: 'You no longer have access to this case',
  signed_out: 'You were signed out',
};

/**
 * A kicked tab: the server closed it on purpose, and the channel does not
 * reconnect. `reason` says why: `kicked` (an administrator closed the tab),
 * `access_removed` (the membership ended) or `signed_out` (the token ended).
 */
export class KickedError extends BatonError {
  override name = 'KickedError';
  readonly reason: KickReason;
  constructor(reason: KickReason) {
    const text = KICKED_TEXT[reason] ?? `This tab was closed by the server: ${reason}`;
    super('kicked', 0, /[.!?]$/.test(text) ? text : `${text}.`);
    this.reason = reason;
  }
}

/** The longest a Retry-After may hold the channel back, in ms. */
const MAX_RETRY_AFTER = 5 * 60_000;

/** How long the server asked the client to wait, in ms, from an error's `Retry-After`. */
export function retryAfterMs(error: unknown): number {
  const seconds = error instanceof BatonError ? error.retryAfter : null;
  return seconds === null || !(seconds > 0) ? 0 : Math.min(MAX_RETRY_AFTER, seconds * 1000);
}

const defaultSignals = (): NetworkSignals => ({
  network: typeof addEventListener === 'function' ? globalThis : undefined,
  page: typeof document === 'undefined' ? undefined : document,
});

/**
 * The edits channel of one case: connects, watches the connection with an
 * application-level ping, reconnects with backoff, stops for good on fatal
 * errors and when kicked.
 */
export class EditsChannel {
  status: ChannelStatus = 'stopped';
  private socket: WebSocketLike | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When the pending retry may run (a `Retry-After` is not cut short by `online`). */
  private notBefore = 0;
  private attempt = 0;
  private stopped = true;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private heartbeatMs = 0;
  /** A ping went out and its pong has not come back. */
  private awaitingPong = false;
  private probe: ReturnType<typeof setTimeout> | null = null;
  private unlisten: (() => void) | null = null;
  /** A connect waits for `beforeReconnect` or `recover`: nothing else starts one meanwhile. */
  private preparing = false;

  constructor(private readonly options: ChannelOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.listen();
    this.connect();
  }

  /** Closes for good; `error` says why (null when the app asked). */
  stop(error: BatonError | null = null): void {
    if (this.stopped) return;
    this.stopped = true;
    this.clearTimer();
    this.unlisten?.();
    this.unlisten = null;
    this.drop(1000);
    this.setStatus('stopped');
    this.options.onStop?.(error);
  }

  /** Drops the connection and connects again (as after a network change). */
  reconnect(): void {
    if (this.stopped || this.preparing) return;
    if (this.socket) {
      this.drop(4000);
      this.setStatus('reconnecting');
    }
    this.clearTimer();
    this.connect();
  }

  /** The tab is in step with the server again (its refetch after `welcome` succeeded): the next retry starts from the first delay. */
  resynced(): void {
    this.attempt = 0;
  }

  /**
   * The resync after a (re)connect failed: drops the connection and tries
   * again after the backoff (or the server's `Retry-After`), never at once.
   * A fatal error stops the channel.
   */
  failed(error: unknown): void {
    if (this.stopped) return;
    if (isFatal(error)) {
      this.stop(error);
      return;
    }
    this.drop(4000);
    this.setStatus('reconnecting');
    this.schedule(retryAfterMs(error));
  }

  /** Sends a frame; false when there is no open connection. */
  send(frame: { type: string }): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== 1) return false;
    try {
      socket.send(JSON.stringify(frame));
      return true;
    } catch {
      return false;
    }
  }

  private setStatus(status: ChannelStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.options.onStatus?.(status);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.notBefore = 0;
  }

  /** Forgets the current socket (its handlers go quiet) and closes it. */
  private drop(code: number): void {
    this.stopHeartbeat();
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    socket.onopen = socket.onmessage = socket.onclose = null;
    // Closing a socket that is still connecting makes some implementations
    // (Node's `ws`) report an error event afterwards; with no handler that
    // would be an uncaught exception, so keep a silent one.
    socket.onerror = () => {};
    try {
      socket.close(code);
    } catch {
      // already closed
    }
  }

  private connect(): void {
    if (this.stopped || this.preparing) return;
    this.timer = null;
    this.notBefore = 0;
    const again = this.attempt > 0 || this.status === 'reconnecting';
    this.setStatus(again ? 'reconnecting' : 'connecting');
    const prepare = again ? this.options.beforeReconnect : undefined;
    if (!prepare) return this.open();
    this.preparing = true;
    void prepare()
      .catch(() => {})
      .then(() => {
        this.preparing = false;
        if (!this.stopped && !this.socket) this.open();
      });
  }

  private open(): void {
    let socket: WebSocketLike;
    try {
      socket = new this.options.WebSocket(this.options.url());
    } catch (error) {
      this.stop(error instanceof BatonError ? error : new BatonError('invalid', 0, String(error)));
      return;
    }
    this.socket = socket;
    let welcomed = false;
    // a handshake lost in a dead network never ends by itself
    const giveUp = setTimeout(() => {
      if (this.socket === socket && !welcomed) this.dead();
    }, this.options.backoff?.connectTimeout ?? 10_000);
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      const frame = parseFrame(event.data);
      if (!frame) return;
      if (frame.type === 'pong') {
        this.awaitingPong = false;
        this.settleProbe();
        return;
      }
      if (frame.type === 'welcome') {
        welcomed = true;
        clearTimeout(giveUp);
        this.setStatus('open');
        this.startHeartbeat(frame.heartbeatMs);
      }
      if (frame.type === 'kicked') {
        this.kicked(new KickedError(frame.reason));
        return;
      }
      try {
        this.options.onFrame(frame);
      } catch (error) {
        // a frame the client cannot use must not take the channel down
        console.error('baton: a frame could not be applied', error);
      }
    };
    socket.onerror = () => {
      // onclose follows and decides
    };
    socket.onclose = (event) => {
      clearTimeout(giveUp);
      if (this.socket !== socket) return;
      this.socket = null;
      this.stopHeartbeat();
      this.setStatus('reconnecting');
      // 1008: the server closed the tab on purpose (its `kicked` frame may not have arrived): ask why before retrying
      void this.retry(welcomed && event?.code !== 1008);
    };
  }

  /** The server closed the tab on purpose: stop, unless `recover` finds a way to carry on. */
  private kicked(error: KickedError): void {
    const recover = this.options.recover;
    if (!recover) return this.stop(error);
    this.drop(1000);
    this.setStatus('reconnecting');
    this.clearTimer();
    this.preparing = true;
    void recover(error)
      .catch(() => false)
      .then((carryOn) => {
        this.preparing = false;
        if (this.stopped) return;
        if (!carryOn) return this.stop(error);
        if (!this.socket) this.open();
      });
  }

  private async retry(wasOpen: boolean): Promise<void> {
    if (this.stopped) return;
    let wait = 0;
    if (!wasOpen && this.options.check) {
      try {
        await this.options.check();
      } catch (error) {
        if (this.stopped) return;
        if (isFatal(error)) {
          this.stop(error);
          return;
        }
        wait = retryAfterMs(error);
      }
    }
    // a reconnect meanwhile (the `online` event) has a connection under way already
    if (this.stopped || this.socket || this.timer || this.preparing) return;
    this.schedule(wait);
  }

  /** The next attempt after the backoff's delay, or the server's `Retry-After` when that is longer. */
  private schedule(retryAfter: number): void {
    this.clearTimer();
    const delay = Math.max(retryAfter, backoffDelay(this.attempt++, this.options.backoff, this.options.random));
    this.notBefore = retryAfter > 0 ? Date.now() + retryAfter : 0;
    this.timer = setTimeout(() => this.connect(), delay);
  }

  // --- the watchdog -------------------------------------------------------

  private startHeartbeat(heartbeatMs: number | undefined): void {
    this.stopHeartbeat();
    // a server that does not say how often gets no pings (it would not answer them)
    if (typeof heartbeatMs !== 'number' || !(heartbeatMs > 0)) return;
    this.heartbeatMs = heartbeatMs;
    this.heartbeat = setInterval(this.beat, heartbeatMs);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.heartbeatMs = 0;
    this.awaitingPong = false;
    this.settleProbe();
  }

  /** Every heartbeat: the last ping's pong must be back, else the connection is dead. */
  private beat = (): void => {
    // a check on `online` or `visibilitychange` is under way: it decides
    if (this.probe) return;
    if (this.awaitingPong) {
      this.dead();
      return;
    }
    this.awaitingPong = this.send({ type: 'ping' });
  };

  private dead(): void {
    if (this.stopped || !this.socket || this.preparing) return;
    this.drop(4000);
    this.setStatus('reconnecting');
    this.schedule(0);
  }

  private settleProbe(): void {
    if (this.probe) clearTimeout(this.probe);
    this.probe = null;
  }

  /** Asks the server for a pong now; none within a heartbeat means the connection is dead. */
  private check = (): void => {
    if (this.stopped) return;
    if (!this.socket) {
      // waiting to retry: try now, unless the server asked to wait
      if (this.timer && !this.preparing && Date.now() >= this.notBefore) {
        this.clearTimer();
        this.connect();
      }
      return;
    }
    if (!this.heartbeatMs || this.probe || this.status !== 'open') return;
    if (!this.send({ type: 'ping' })) return;
    this.awaitingPong = true;
    this.probe = setTimeout(() => {
      this.probe = null;
      if (this.awaitingPong) this.dead();
    }, this.heartbeatMs);
  };

  private listen(): void {
    const { network, page } = this.options.signals ?? defaultSignals();
    const onVisible = () => {
      if (page?.visibilityState !== 'hidden') this.check();
    };
    const onOnline = () => {
      // the network changed: without a heartbeat to ask with, replace the connection
      if (this.socket && !this.heartbeatMs) this.reconnect();
      else this.check();
    };
    network?.addEventListener('online', onOnline);
    page?.addEventListener('visibilitychange', onVisible);
    this.unlisten = () => {
      network?.removeEventListener('online', onOnline);
      page?.removeEventListener('visibilitychange', onVisible);
    };
  }
}
