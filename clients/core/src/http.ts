import { NetworkError, UnauthorizedError, errorFromResponse } from './errors.js';
import { fromWire } from './wire.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Where baton answers, e.g. `https://baton.example.com` or `''` for same origin. */
  baseUrl: string;
  fetch: FetchLike;
  sessionId: string;
  token: () => string | null;
  /** Told about every 401, so the app can send the person to sign in. */
  onUnauthorized?: (error: UnauthorizedError) => void;
}

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
   * `Api.call` fills it in from the OpenAPI document for each route.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'X-Session-ID': this.options.sessionId,
    };
    const token = this.options.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.ifMatch != null) headers['If-Match'] = `"${opts.ifMatch}"`;
    if (opts.lockToken) headers['Lock-Token'] = opts.lockToken;

    let response: Response;
    try {
      response = await this.options.fetch(this.url(path, opts.query), {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        keepalive: opts.keepalive,
        signal: opts.signal,
      });
    } catch (cause) {
      throw new NetworkError(`${method} ${path} failed: baton did not answer`, cause);
    }

    let data: unknown = null;
    const text = await response.text().catch(() => '');
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    if (!response.ok) {
      const error = errorFromResponse(response.status, data, response.headers);
      if (error instanceof UnauthorizedError && path !== '/auth/login') this.options.onUnauthorized?.(error);
      throw error;
    }
    return { status: response.status, data: fromWire<T>(data), version: parseEtag(response.headers.get('ETag')) };
  }
}
