/** Helpers the tests share: users, cases and clients on a real baton server. */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { afterEach, inject } from 'vitest';
import WebSocket from 'ws';
import { BatonClient, type BatonClientOptions, type SessionStore, type WebSocketConstructor } from '../core/src/index.js';
import type { AnyRecord, Case, User } from '../core/src/types.js';

/** The default schema's records the tests use (the kit itself names no type). */
export type Page = AnyRecord & { type: 'Page'; title: string; position: number };
export type Card = AnyRecord & { type: 'Card'; pageId: number; content: string; position: number };
export type Casebook = { Page: Page; Card: Card; Edgenote: AnyRecord & { slug: string; caption: string; content: string } };
import type { ServerInfo } from './server-info.js';

export type { ServerInfo };

export const servers = (): ServerInfo[] => inject('servers');
/** The servers of an example schema (`kanban`, `book`, or `invoices`: test/invoices.toml), one per backend. */
export const schemaServers = (schema: NonNullable<ServerInfo['schema']>): ServerInfo[] => inject('schemaServers').filter((s) => s.schema === schema);

export const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

export interface Person {
  user: User;
  email: string;
  password: string;
  token: string;
}

export class MemoryStorage implements SessionStore {
  private items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

/** Raw HTTP for setting things up, independent of the client under test. */
export async function rest<T>(server: ServerInfo, token: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; data: T; headers: Headers }> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(server.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, data: (text ? JSON.parse(text) : null) as T, headers: response.headers };
}

async function ok<T>(promise: Promise<{ status: number; data: T }>, what: string): Promise<T> {
  const { status, data } = await promise;
  if (status >= 300) throw new Error(`${what}: ${status} ${JSON.stringify(data)}`);
  return data;
}

export function cli(server: ServerInfo, args: string[]): string {
  return execFileSync(server.bin, args, { cwd: server.dir, env: { ...process.env, ...server.env } }).toString();
}

/** A user made by the site admin over REST, signed in. */
export async function person(server: ServerInfo, name: string): Promise<Person> {
  const email = `${unique(name.toLowerCase())}@example.com`;
  const password = `${name}-password-1`;
  await ok(rest(server, server.adminToken, 'POST', '/users', { user: { email, name, password } }), 'create user');
  const login = await ok(rest<{ token: string; user: User }>(server, null, 'POST', '/auth/login', { email, password }), 'login');
  return { user: login.user, email, password, token: login.token };
}

export interface Fixture {
  kase: Case;
  page: Page;
  cards: Card[];
}

/** A case owned by `owner` with a page of `cardCount` cards; `editors` become editors. */
export async function caseFor(server: ServerInfo, owner: Person, editors: Person[], cardCount = 2): Promise<Fixture> {
  const slug = unique('case');
  const kase = await ok(rest<Case>(server, owner.token, 'POST', '/cases', { case: { slug, title: `Case ${slug}` } }), 'create case');
  for (const editor of editors) {
    await ok(rest(server, owner.token, 'POST', `/cases/${slug}/memberships`, { membership: { email: editor.email, role: 'editor' } }), 'add member');
  }
  const page = await ok(rest<Page>(server, owner.token, 'POST', `/cases/${slug}/pages`, { page: { title: 'First page' } }), 'create page');
  const cards: Card[] = [];
  for (let i = 0; i < cardCount; i++) {
    cards.push(await ok(rest<Card>(server, owner.token, 'POST', `/pages/${page.id}/cards`, { card: { content: `card ${i}` } }), 'create card'));
  }
  return { kase, page, cards };
}

/** A browser tab of `who`: its own session storage, `ws` for the channel, quick reconnects. */
export function tab(
  server: ServerInfo,
  who: Person | null,
  storage: SessionStore = new MemoryStorage(),
  options: Partial<BatonClientOptions> = {},
): BatonClient {
  return new BatonClient({
    baseUrl: server.baseUrl,
    fetch: (input, init) => fetch(input, init),
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    storage,
    token: who?.token ?? null,
    backoff: { initialDelay: 50, maxDelay: 400 },
    releaseOnPageHide: false,
    ...options,
  });
}

/** `tab`, for a `describe` block: every tab it opens is disposed after each test. */
export function tabsDisposedAfterEach(): typeof tab {
  const open: BatonClient[] = [];
  afterEach(() => {
    for (const c of open.splice(0)) c.dispose();
  });
  return (...args) => {
    const c = tab(...args);
    open.push(c);
    return c;
  };
}

/** An HS256 token signed with the server's secret; `exp` in seconds since the epoch. */
export function forgeToken(server: ServerInfo, userId: number, exp: number): string {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: String(userId), exp, iat: exp - 3600 })}`;
  const sig = createHmac('sha256', server.env.BATON_JWT_SECRET!).update(body).digest('base64url');
  return `${body}.${sig}`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
