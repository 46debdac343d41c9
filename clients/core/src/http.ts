import { NetworkError, TimeoutError, UnauthorizedError, errorFromResponse } from './errors.js';
import { fromWire } from './wire.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Where baton answers, e.g. `https://baton.example.com` or `''` for same origin. */
  baseUrl: string;
  fetch: FetchLike;
  /** The tab's session id (it may change once at start: a duplicated tab takes a new one). */
  sessionId: () => string;
  /** Resolves once the session id is settled; requests wait for it. */
  ready?: () => Promise<void> | undefined;
  token: () => string | null;
  /**
   * Asked for a fresh token after a 401 (the token the request was sent
   * with is passed): a different token is tried once more.
   */
  renewToken?: (refused: string | null) => Promise<string | null>;
  /** Told about every 401 that a fresh token did not cure, so the app can send the person to sign in. */
  onUnauthorized?: (error: UnauthorizedError) => void;
  /** How long a request may take, answer included, before it fails with TimeoutError (ms; default 10 000). */
  timeout?: number;
}

/** How long a request may take by default (ms). */
export const DEFAULT_TIMEOUT = 10_000;

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as `If-Match: "<version>"`. */
  ifMatch?: number | string | null;
  /** Sent as `Lock-Token`. */
  lockToken?: string | null;
  /** Lets the request outlive the page (`pagehide`). */
  keepalive?: boolean;
  signal?: AbortSignal;
  /** This request's timeout (ms), instead of the transport's. */
  timeout?: number;
}

export interface Reply<T> {
  status: number;
  data: T;
  /** The record's version from `ETag`, when the response had one. */
  version: number | null;
}

function parseEtag(etag: string | null): number | null {
  if (!etag) return null;
  const n = Number(etag.replace(/^W\//, '').replace(/"/g, ''));
  return Number.isFinite(n) ? n : null;
}

/** One HTTP request to baton: headers in, typed errors out. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query?: RequestOptions['query']): string {
    let url = this.baseUrl + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (value !== undefined) params.set(key, String(value));
      }
      const qs = params.toString();
      if (qs) url += (url.includes('?') ? '&' : '?') + qs;
    }
    return url;
  }

  /**
   * Sends one request; `T` is what the caller expects the answer to be.
   * `Api.call` fills it in from the OpenAPI document for each route. A
   * request that has no complete answer within the timeout fails with
   * TimeoutError; a 401 asks `renewToken` once and tries again with a
   * different token.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const ready = this.options.ready?.();
    if (ready) await ready;
    const token = this.options.token();
    try {
      return await this.send<T>(method, path, opts, token);
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || path === '/auth/login') throw error;
      // a fresh token came while this request was on its way: it is tried with that one, nobody is asked
      const now = this.options.token();
      const renewed = now && now !== token ? now : this.options.renewToken ? await this.options.renewToken(token).catch(() => null) : null;
      if (renewed && renewed !== token) {
        try {
          return await this.send<T>(method, path, opts, renewed);
        } catch (again) {
          if (again instanceof UnauthorizedError) this.options.onUnauthorized?.(again);
          throw again;
        }
      }
      this.options.onUnauthorized?.(error);
      throw error;
    }
  }

  private async send<T>(method: string, path: string, opts: RequestOptions, token: string | null): Promise<Reply<T>> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Session-ID': this.options.sessionId(),
    };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.ifMatch != null) headers['If-Match'] = `"${opts.ifMatch}"`;
    if (opts.lockToken) headers['Lock-Token'] = opts.lockToken;

    // the timeout covers the whole answer, body included: a connection that goes quiet halfway fails too
    const ms = opts.timeout ?? this.options.timeout ?? DEFAULT_TIMEOUT;
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, ms);
    const caller = opts.signal;
    const passOn = () => abort.abort();
    if (caller?.aborted) abort.abort();
    else caller?.addEventListener('abort', passOn, { once: true });
    const failed = (cause: unknown) =>
      timedOut ? new TimeoutError(`${method} ${path}: no answer within ${ms} ms`, cause) : new NetworkError(`${method} ${path} failed: baton did not answer`, cause);

    try {
      let response: Response;
      try {
        response = await this.options.fetch(this.url(path, opts.query), {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          keepalive: opts.keepalive,
          signal: abort.signal,
        });
      } catch (cause) {
        throw failed(cause);
      }

      let text: string;
      try {
        text = await response.text();
      } catch (cause) {
        // the answer was cut off: its status alone says nothing about what happened
        if (timedOut || abort.signal.aborted) throw failed(cause);
        text = '';
      }
      let data: unknown = null;
      if (text) {
        try {
          data = JSON.parse(text);
        } catch {
          data = text;
        }
      }
      if (!response.ok) throw errorFromResponse(response.status, data, response.headers);
      return { status: response.status, data: fromWire<T>(data), version: parseEtag(response.headers.get('ETag')) };
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', passOn);
    }
  }
}
