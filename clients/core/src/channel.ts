import { BatonError, isFatal } from './errors.js';
import type { ServerFrame } from './types.js';
import { fromWire } from './wire.js';

/** The part of the WebSocket API the channel uses (browsers' and the `ws` package's both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface Backoff {
  /** First retry delay in ms (default 500). */
  initialDelay?: number;
  /** Longest delay in ms (default 30 000). */
  maxDelay?: number;
}

export type ChannelStatus = 'connecting' | 'open' | 'reconnecting' | 'stopped';

export interface ChannelOptions {
  url: () => string;
  WebSocket: WebSocketConstructor;
  backoff?: Backoff;
  /** A frame the client knows; unknown ones are dropped before this. */
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
}

const KNOWN: ReadonlySet<string> = new Set<ServerFrame['type']>(['welcome', 'create', 'update', 'destroy', 'presence', 'resync', 'kicked']);

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

/** A kicked tab: the server closed it on purpose. */
export class KickedError extends BatonError {
  override name = 'KickedError';
  constructor(reason: string) {
    super('kicked', 0, `This tab was closed by the server: ${reason}`);
  }
}

/** The edits channel of one case: connects, reconnects with backoff, stops for good on fatal errors. */
export class EditsChannel {
  status: ChannelStatus = 'stopped';
  private socket: WebSocketLike | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private stopped = true;

  constructor(private readonly options: ChannelOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.connect();
  }

  /** Closes for good; `error` says why (null when the app asked). */
  stop(error: BatonError | null = null): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      // Closing a socket that is still connecting makes some implementations
      // (Node's `ws`) report an error event afterwards; with no handler that
      // would be an uncaught exception, so keep a silent one.
      socket.onerror = () => {};
      try {
        socket.close(1000);
      } catch {
        // already closed
      }
    }
    this.setStatus('stopped');
    this.options.onStop?.(error);
  }

  /** Drops the connection and reconnects at once (as after a network change). */
  reconnect(): void {
    if (this.stopped) return;
    this.socket?.close(4000, 'reconnect');
  }

  private setStatus(status: ChannelStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.options.onStatus?.(status);
  }

  private connect(): void {
    if (this.stopped) return;
    this.timer = null;
    this.setStatus(this.attempt === 0 && this.status !== 'reconnecting' ? 'connecting' : 'reconnecting');
    let socket: WebSocketLike;
    try {
      socket = new this.options.WebSocket(this.options.url());
    } catch (error) {
      this.stop(error instanceof BatonError ? error : new BatonError('invalid', 0, String(error)));
      return;
    }
    this.socket = socket;
    let welcomed = false;
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      const frame = parseFrame(event.data);
      if (!frame) return;
      if (frame.type === 'welcome') {
        welcomed = true;
        this.attempt = 0;
        this.setStatus('open');
      }
      if (frame.type === 'kicked') {
        this.stop(new KickedError(frame.reason));
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
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setStatus('reconnecting');
      void this.retry(welcomed);
    };
  }

  private async retry(wasOpen: boolean): Promise<void> {
    if (this.stopped) return;
    if (!wasOpen && this.options.check) {
      try {
        await this.options.check();
      } catch (error) {
        if (isFatal(error)) {
          this.stop(error);
          return;
        }
      }
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.connect(), backoffDelay(this.attempt++, this.options.backoff));
  }
}
