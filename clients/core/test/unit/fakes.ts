/**
 * A fake baton for the kit's unit tests: a WebSocket whose server side the
 * test plays, and a fetch that answers each route as the test says (at
 * once, later, or never). With vitest's fake timers they make the
 * channel's, the store's and the lock manager's races deterministic.
 */
import type { WebSocketLike } from '../../src/index.js';

export const at = '2026-01-01T00:00:00Z';
export const SESSION = 'tab-1';
export const ME = 1;

export const alice = { type: 'User', table: 'users', param: '1', id: 1, name: 'Alice', color: '#e6194b' } as const;
export const bob = { type: 'User', table: 'users', param: '2', id: 2, name: 'Bob', color: '#3cb44b' } as const;

const rules = { lease: null, takeover: 'editor', wait: true };
const declared = (name: string, plural: string, parent: string) => ({
  name,
  plural,
  table: plural,
  parent,
  store: 'baton',
  ordered: true,
  movable: false,
  label: null,
  bodyKey: name.toLowerCase(),
  parentKey: parent === 'Case' ? 'caseId' : `${parent.toLowerCase()}Id`,
  nestKey: plural,
  fields: {},
  required: [],
  unique: [],
  lock: rules,
});
export const schemaDoc = { types: [declared('Page', 'pages', 'Case'), declared('Card', 'cards', 'Page')] };

export const page = (id: number, version = 1) =>
  ({ type: 'Page', table: 'pages', param: String(id), id, caseId: 5, position: id, title: `Page ${id}`, version, createdAt: at, updatedAt: at }) as const;
export const card = (id: number, pageId: number, version = 1, content = `card ${id}`) =>
  ({ type: 'Card', table: 'cards', param: String(id), id, caseId: 5, pageId, position: id, content, version, createdAt: at, updatedAt: at }) as const;

export const lockOn = (record: { type: string; table: string; param: string }, token: number, user: typeof alice | typeof bob = alice, sessionId = SESSION) => ({
  type: 'Lock' as const,
  table: 'locks' as const,
  param: String(token),
  id: token,
  token: String(token),
  lockable: { type: record.type, table: record.table, param: record.param },
  depth: '0' as const,
  caseId: 5,
  user,
  sessionId,
  userAgent: null,
  createdAt: at,
  expiresAt: '2026-01-01T00:01:00Z',
  lastActivityAt: at,
});

/** `GET /cases/demo`: two pages with two cards each. */
export const caseDetail = () => ({
  type: 'Case',
  table: 'cases',
  param: '5',
  id: 5,
  slug: 'demo',
  title: 'Demo',
  version: 1,
  createdAt: at,
  updatedAt: at,
  role: 'editor',
  activeLocks: [],
  waiters: [],
  onlineUsers: [],
  pages: [
    { ...page(1), cards: [card(11, 1), card(12, 1)] },
    { ...page(2), cards: [card(21, 2), card(22, 2)] },
  ],
});

/** A WebSocket the test plays the server of. Every one made is in `FakeSocket.all`. */
export class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  static get last(): FakeSocket {
    const socket = FakeSocket.all.at(-1);
    if (!socket) throw new Error('no socket was opened');
    return socket;
  }
  readyState = 0;
  sent: unknown[] = [];
  closedWith: number | null = null;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;

  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  /** The server: accepts and says welcome. */
  welcome(extra: Record<string, unknown> = {}): void {
    this.readyState = 1;
    this.onopen?.({});
    this.frame({ type: 'welcome', sessionId: SESSION, activeLocks: [], waiters: [], onlineUsers: [], ...extra });
  }
  frame(frame: unknown): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  /** The server (or the network) closes the connection. */
  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }
  pings(): number {
    return this.sent.filter((f) => (f as { type?: string }).type === 'ping').length;
  }
}

export interface Call {
  method: string;
  path: string;
  body: unknown;
  /** The request's headers (`authorization`, `x-session-id`, … in lower case). */
  headers: Record<string, string>;
  /** The query string's parameters. */
  query: Record<string, string>;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };
type Route = (call: Call) => Answer | Promise<Answer>;

/** A fetch that answers from `routes` (`'GET /cases/demo'`, `'POST /locks'`, `'DELETE /locks/*'`) and records every call. */
export function fakeFetch(routes: Record<string, Route>) {
  const calls: Call[] = [];
  const fetch = async (input: string, init?: RequestInit): Promise<Response> => {
    const url = new URL(input, 'http://baton.test');
    const method = init?.method ?? 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const call: Call = {
      method,
      path: url.pathname,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      headers,
      query: Object.fromEntries(url.searchParams),
    };
    calls.push(call);
    const route =
      routes[`${method} ${url.pathname}`] ??
      Object.entries(routes).find(([k]) => k.endsWith('*') && `${method} ${url.pathname}`.startsWith(k.slice(0, -1)))?.[1];
    if (!route) return new Response(JSON.stringify({ error: { code: 'not_found', message: 'no route' } }), { status: 404 });
    // an aborted request (the kit's timeout, the caller's signal) fails as a real fetch does
    const signal = init?.signal;
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new DOMException('The operation was aborted.', 'AbortError'));
      if (signal?.aborted) fail();
      else signal?.addEventListener('abort', fail, { once: true });
    });
    const answer = await Promise.race([route(call), aborted]);
    const body = answer.body === undefined ? null : JSON.stringify(answer.body);
    return new Response(answer.status === 204 ? null : body, { status: answer.status, headers: answer.headers });
  };
  return { fetch, calls };
}

/** A promise the test settles. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A token whose `sub` is the user's id (the kit reads it; nothing checks the signature here). */
export const tokenFor = (userId: number): string =>
  `e30.${Buffer.from(JSON.stringify({ sub: String(userId) })).toString('base64url')}.sig`;

/** A route that fails as a fetch does when the connection breaks: the request may or may not have reached the server. */
export const connectionLost = (): Promise<never> => Promise.reject(new TypeError('fetch failed'));

/** A route that never answers. */
export const never = (): Promise<never> => new Promise<never>(() => {});
