/**
 * A world for each test file: a real baton (its own SQLite file, the host's
 * schema, an API key), the host on a free port with its data in a scratch
 * PostgreSQL schema, and people who sign in to the host and open tabs on
 * @baton/client (with `ws`, as Node 20 has no WebSocket).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { BatonClient, type LiveCase, type SessionStore, type TargetRef, type WebSocketConstructor } from '@baton/client';
import { Baton } from '../src/server/baton.js';
import { HostDb, type Invoice } from '../src/server/db.js';
import { createHost, type HostOptions } from '../src/server/host.js';
import { findBaton, freePort, startBaton, type RunningBaton } from '../src/server/launch.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const DATABASE_URL =
  process.env.HOST_TEST_DATABASE_URL ?? process.env.BATON_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const CASE = 'acme';

export interface World {
  baton: RunningBaton;
  db: HostDb;
  /** The host's address, e.g. http://127.0.0.1:41234. */
  url: string;
  server: Server;
  /** A host on the same baton and database with another API key. */
  hostWith(apiKey: string): Promise<{ url: string; close(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startWorld(options: Pick<HostOptions, 'beforeWrite'> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-host-node-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const baton = await startBaton({
    bin: findBaton(resolve(ROOT, '..', '..')),
    dir,
    schema: join(ROOT, 'schema.toml'),
    corsOrigins: [url],
    keyName: 'host-test',
    env: { BATON_HEARTBEAT_INTERVAL: '200ms', BATON_DISCONNECT_GRACE: '1s', BATON_REAPER_INTERVAL: '100ms' },
    log: process.env.BATON_TEST_LOG ? (chunk) => process.stderr.write(`[baton] ${chunk}`) : undefined,
  });
  const schema = `host_test_${randomBytes(4).toString('hex')}`;
  const db = await HostDb.open(DATABASE_URL, schema);
  await db.seed();
  const quiet = { log: () => {} };
  const make = async (apiKey: string, at = 0) => {
    const client = new Baton({ url: baton.url, apiKey, caseSlug: CASE, caseTitle: 'Acme invoices', type: 'Invoice' });
    const server = createHost({ db, baton: client, publicDir: join(ROOT, 'public'), ...quiet, ...options });
    await new Promise<void>((done) => server.listen(at, '127.0.0.1', done));
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : at;
    const close = () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    return { server, url: `http://127.0.0.1:${bound}`, close };
  };
  const main = await make(baton.apiKey, port);
  const others: (() => Promise<void>)[] = [];
  return {
    baton,
    db,
    url,
    server: main.server,
    async hostWith(apiKey) {
      const host = await make(apiKey);
      others.push(host.close);
      return host;
    },
    async stop() {
      await Promise.allSettled([main.close(), ...others.map((close) => close())]);
      await baton.stop();
      await db.pool.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The row as it is in the host's database. */
export async function row(db: HostDb, id: string): Promise<{ customer: string; version: number; baton_token: string }> {
  const { rows } = await db.pool.query<{ customer: string; version: number; baton_token: string }>(
    'SELECT customer, version, baton_token FROM invoices WHERE id = $1',
    [id],
  );
  return rows[0]!;
}

class MemoryStorage implements SessionStore {
  private items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

export interface Answer<T> {
  status: number;
  data: T;
}

/** Someone signed in to the host (its cookie), who can open tabs. */
export class Person {
  private constructor(
    readonly hostUrl: string,
    private readonly cookie: string,
  ) {}

  static async signIn(hostUrl: string, email: string, password: string): Promise<Person> {
    const response = await fetch(`${hostUrl}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    if (response.status !== 200) throw new Error(`sign-in of ${email}: ${response.status} ${await response.text()}`);
    const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
    return new Person(hostUrl, cookie);
  }

  /** A call to the host's API as this person. */
  async api<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const response = await fetch(this.hostUrl + path, {
      method,
      headers: { Cookie: this.cookie, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, data: (text ? JSON.parse(text) : null) as T };
  }

  /** A browser tab of this person: a baton token from the host, the case open and live, the host's invoices in its store. */
  async tab(): Promise<Tab> {
    const minted = await this.api<{ token: string; batonUrl: string; case: string }>('POST', '/api/baton-token', {});
    if (minted.status !== 201) throw new Error(`minting: ${minted.status} ${JSON.stringify(minted.data)}`);
    const baton = new BatonClient({
      baseUrl: minted.data.batonUrl,
      token: minted.data.token,
      case: minted.data.case,
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      storage: new MemoryStorage(),
      backoff: { initialDelay: 50, maxDelay: 400 },
      releaseOnPageHide: false,
    });
    const { live } = baton.openCase(minted.data.case);
    await live.ready();
    const invoices = await this.api<{ invoices: Invoice[] }>('GET', '/api/invoices');
    for (const invoice of invoices.data.invoices) live.store.upsert(invoice);
    tabs.push(baton);
    return new Tab(this, baton, live);
  }
}

const tabs: BatonClient[] = [];
/** Closes every tab opened so far. */
export function closeTabs(): void {
  for (const baton of tabs.splice(0)) baton.dispose();
}

export class Tab {
  constructor(
    readonly person: Person,
    readonly baton: BatonClient,
    readonly live: LiveCase,
  ) {}

  /** The invoice as this tab's store has it. */
  invoice(id: string): Invoice | undefined {
    return this.live.store.get<Invoice & { type: string }>(`Invoice/${id}`) as Invoice | undefined;
  }

  /** The host's save, as the page sends it: this tab's session id and its lock token (or another token, to play a stale request). */
  save<T = Record<string, any>>(id: string, fields: Record<string, unknown>, lockToken = this.baton.locks.tokenFor(invoice(id))): Promise<Answer<T>> {
    return this.person.api('PATCH', `/api/invoices/${id}`, { invoice: fields, sessionId: this.baton.sessionId, lockToken });
  }
}

export const invoice = (id: string): TargetRef => ({ type: 'Invoice', param: id });
