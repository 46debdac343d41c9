/**
 * Starts real baton servers for the scenarios: `baton serve --demo` on a
 * fresh SQLite file, and on a scratch PostgreSQL database (created here,
 * dropped afterwards) when BATON_TEST_POSTGRES_URL is set; on each, one with
 * the default schema (the casebook) and one per example schema
 * (examples/schemas/kanban.toml, book.toml, api.toml) for the specs named after them.
 * Lifetimes are short so that expiry and the disconnect grace show within a
 * test.
 *
 * baton serves the built app (web/dist) at `/`, and the tests drive it from
 * that one origin; with BATON_E2E_PREVIEW=1 they go through `vite preview`
 * and its proxy instead (the production bundle either way).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FullConfig } from '@playwright/test';

const webRoot = resolve(import.meta.dirname, '..');

export interface ServerInfo {
  backend: 'sqlite' | 'postgres';
  /** The example schema it serves (examples/schemas/<name>.toml), none for the default (the casebook). */
  schema?: Schema;
  /** Where the browser opens the app (and the API answers, same origin). */
  appUrl: string;
  /** baton itself. */
  apiUrl: string;
  /** How the app is served: by baton, or by `vite preview` in front of it. */
  servedBy: 'baton' | 'vite-preview';
}

export const LIFETIMES = {
  BATON_LOCK_TTL: '3s',
  BATON_HEARTBEAT_INTERVAL: '300ms',
  BATON_DISCONNECT_GRACE: '1500ms',
  BATON_REAPER_INTERVAL: '100ms',
};

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

async function waitFor(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}:\n${log()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer:\n${log()}`);
}

export interface Running {
  child: ChildProcess;
  name: string;
}

function spawnLogged(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  let output = '';
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
    if (process.env.BATON_TEST_LOG) process.stderr.write(`[${name}] ${d.toString()}`);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, log: () => output };
}

export interface BatonOptions {
  port?: number;
  secret?: string;
  schema?: Schema;
  /** More of baton's settings (e.g. a short `BATON_TOKEN_TTL`). */
  env?: Record<string, string>;
}

/** The example schemas the scenario specs named after them run on (`5-kanban.spec.ts` on `kanban`). */
export const SCHEMAS = ['kanban', 'book', 'api'] as const;
export type Schema = (typeof SCHEMAS)[number];
const repoRoot = resolve(webRoot, '..');

export function batonBinary(): string {
  return resolve(process.env.BATON_BIN ?? '/root/.cache/baton-target/debug/baton');
}

export async function startBaton(
  bin: string,
  backend: ServerInfo['backend'],
  databaseUrl: string,
  dir: string,
  running: Running[],
  options: BatonOptions = {},
) {
  const port = options.port ?? (await freePort());
  const env = {
    ...process.env,
    ...LIFETIMES,
    DATABASE_URL: databaseUrl,
    BATON_BIND: `127.0.0.1:${port}`,
    BATON_JWT_SECRET: options.secret ?? randomBytes(24).toString('hex'),
    RUST_LOG: process.env.RUST_LOG ?? 'warn',
    ...(options.schema ? { BATON_SCHEMA: join(repoRoot, 'examples', 'schemas', `${options.schema}.toml`) } : {}),
    ...options.env,
  };
  // baton reads a .env from its working directory: run it in the scratch directory
  const name = `baton ${backend}${options.schema ? ` ${options.schema}` : ''}`;
  const { child, log } = spawnLogged(name, bin, ['serve', '--demo'], { cwd: dir, env });
  running.push({ child, name });
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitFor(`${apiUrl}/healthz`, child, log);
  return apiUrl;
}

export async function servesApp(apiUrl: string): Promise<boolean> {
  const response = await fetch(`${apiUrl}/`, { headers: { Accept: 'text/html' } });
  const body = await response.text();
  return response.ok && (response.headers.get('content-type') ?? '').startsWith('text/html') && body.includes('id="root"');
}

export async function startPreview(apiUrl: string, backend: string, running: Running[]): Promise<string> {
  const port = await freePort();
  const vite = join(webRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  const { child, log } = spawnLogged(`preview ${backend}`, process.execPath, [vite, 'preview', '--port', String(port), '--strictPort'], {
    cwd: webRoot,
    env: { ...process.env, BATON_PROXY_TARGET: apiUrl },
  });
  running.push({ child, name: `preview ${backend}` });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/healthz`, child, log);
  return url;
}

async function serve(
  bin: string,
  backend: ServerInfo['backend'],
  databaseUrl: string,
  dir: string,
  running: Running[],
  schema?: Schema,
  env?: Record<string, string>,
): Promise<ServerInfo> {
  const apiUrl = await startBaton(bin, backend, databaseUrl, dir, running, { schema, env });
  const which = schema ? { schema } : {};
  // BATON_E2E_PREVIEW=1 puts `vite preview` (with the proxy) in front of baton, for a baton that does not serve the app
  if (process.env.BATON_E2E_PREVIEW) return { backend, ...which, appUrl: await startPreview(apiUrl, backend, running), apiUrl, servedBy: 'vite-preview' };
  if (!(await servesApp(apiUrl))) throw new Error(`baton at ${apiUrl} does not serve the app at / (is web/dist built?)`);
  return { backend, ...which, appUrl: apiUrl, apiUrl, servedBy: 'baton' };
}

function psql(url: string, sql: string): void {
  execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: 'pipe' });
}

export async function stop(running: Running[]): Promise<void> {
  for (const { child } of running.splice(0).reverse()) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise<void>((done) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        done();
      }, 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  }
}

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
  const bin = batonBinary();
  const running: Running[] = [];
  const cleanups: (() => void)[] = [];
  const servers: Record<string, ServerInfo> = {};
  const teardown = async () => {
    await stop(running);
    for (const cleanup of cleanups.reverse()) {
      try {
        cleanup();
      } catch (error) {
        console.warn('cleanup failed:', error);
      }
    }
  };
  try {
    // the casebook (the default schema) for every spec, and one baton per example schema for the spec named after it
    for (const schema of [undefined, ...SCHEMAS]) {
      const suffix = schema ? `-${schema}` : '';
      const dir = mkdtempSync(join(tmpdir(), 'baton-web-e2e-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      servers[`sqlite${suffix}`] = await serve(bin, 'sqlite', join(dir, 'baton.sqlite3'), dir, running, schema);
      if (process.env.BATON_TEST_POSTGRES_URL) servers[`postgres${suffix}`] = await servePostgres(bin, process.env.BATON_TEST_POSTGRES_URL, running, cleanups, schema);
    }
    // the casebook once more with sign-ins that end within seconds, for the scenario of a token that ends under a draft
    const dir = mkdtempSync(join(tmpdir(), 'baton-web-e2e-short-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    servers['sqlite-short-sign-in'] = await serve(bin, 'sqlite', join(dir, 'baton.sqlite3'), dir, running, undefined, SHORT_SIGN_IN);
    if (process.env.BATON_TEST_POSTGRES_URL) {
      servers['postgres-short-sign-in'] = await servePostgres(bin, process.env.BATON_TEST_POSTGRES_URL, running, cleanups, undefined, SHORT_SIGN_IN);
    }
  } catch (error) {
    await teardown();
    throw error;
  }
  for (const info of Object.values(servers)) {
    console.log(`baton (${info.backend}${info.schema ? `, ${info.schema}` : ''}) at ${info.apiUrl}, app served by ${info.servedBy} at ${info.appUrl}`);
  }
  // workers start after this and inherit the environment
  process.env.BATON_E2E_SERVERS = JSON.stringify(servers);
  return teardown;
}

/**
 * How long a sign-in lasts on the `*-short-sign-in` servers. baton closes a
 * channel when its token ends, and the tab's locks then wait out the
 * disconnect grace while the person types their password: here the grace is
 * the length of a person's answer, not the 1.5 s the other servers use.
 */
export const SHORT_SIGN_IN = { BATON_TOKEN_TTL: '8s', BATON_DISCONNECT_GRACE: '30s' };

/** baton on a scratch PostgreSQL database, created here and dropped by a cleanup. */
async function servePostgres(
  bin: string,
  pgUrl: string,
  running: Running[],
  cleanups: (() => void)[],
  schema?: Schema,
  env?: Record<string, string>,
): Promise<ServerInfo> {
  const name = `baton_web_e2e_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new URL(pgUrl);
  admin.pathname = '/postgres';
  const scratch = new URL(pgUrl);
  scratch.pathname = `/${name}`;
  const pgDir = mkdtempSync(join(tmpdir(), 'baton-web-e2e-pg-'));
  cleanups.push(() => rmSync(pgDir, { recursive: true, force: true }));
  psql(admin.toString(), `CREATE DATABASE ${name}`);
  cleanups.push(() => psql(admin.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return serve(bin, 'postgres', scratch.toString(), pgDir, running, schema, env);
}
