/**
 * Builds baton (unless BATON_BIN names a binary) and starts real servers for
 * the tests: one on a fresh SQLite file, and one on a scratch PostgreSQL
 * database when BATON_TEST_POSTGRES_URL is set; each with the default schema,
 * and the same again with the kanban, book and api schemas of
 * examples/schemas/ (for the tests of declared types) and with
 * test/invoices.toml (a host's external type).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { ServerInfo } from './server-info.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');

function binary(): string {
  if (process.env.BATON_BIN) return resolve(process.env.BATON_BIN);
  const target = process.env.CARGO_TARGET_DIR ? resolve(repoRoot, process.env.CARGO_TARGET_DIR) : join(repoRoot, 'target');
  execFileSync('cargo', ['build', '--release', '--bin', 'baton'], { cwd: repoRoot, stdio: 'inherit' });
  return join(target, 'release', 'baton');
}

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

async function waitHealthy(baseUrl: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`baton exited with ${child.exitCode}:\n${log()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`baton did not become healthy at ${baseUrl}:\n${log()}`);
}

interface Running {
  info: ServerInfo;
  child: ChildProcess;
  cleanup: () => void;
}

const SCHEMAS = ['kanban', 'book', 'api', 'invoices'] as const;
/** Where each schema's file is: the seeds' domains in examples/schemas/, a host's external type here. */
const schemaFile = (schema: (typeof SCHEMAS)[number]): string =>
  schema === 'invoices' ? join(repoRoot, 'clients', 'test', 'invoices.toml') : join(repoRoot, 'examples', 'schemas', `${schema}.toml`);

async function start(
  bin: string,
  backend: 'sqlite' | 'postgres',
  databaseUrl: string,
  dir: string,
  cleanup: () => void,
  schema?: (typeof SCHEMAS)[number],
): Promise<Running> {
  const port = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    BATON_JWT_SECRET: randomBytes(24).toString('hex'),
    BATON_BIND: `127.0.0.1:${port}`,
    BATON_LOCK_TTL: '2s',
    BATON_HEARTBEAT_INTERVAL: '200ms',
    BATON_DISCONNECT_GRACE: '1s',
    BATON_REAPER_INTERVAL: '100ms',
    BATON_WORKERS: '2',
    RUST_LOG: process.env.RUST_LOG ?? 'warn',
  };
  if (schema) env.BATON_SCHEMA = schemaFile(schema);
  const fullEnv = { ...process.env, ...env };
  // baton reads a .env from its working directory: run it in the scratch directory
  execFileSync(bin, ['migrate'], { cwd: dir, env: fullEnv, stdio: 'pipe' });
  const admin = { email: `admin-${randomBytes(4).toString('hex')}@example.com`, password: 'admin-password' };
  execFileSync(bin, ['user', 'add', '--email', admin.email, '--name', 'Admin', '--password', admin.password, '--admin'], {
    cwd: dir,
    env: fullEnv,
    stdio: 'pipe',
  });
  const adminToken = execFileSync(bin, ['token', '--email', admin.email], { cwd: dir, env: fullEnv }).toString().trim();

  let output = '';
  const child = spawn(bin, ['serve'], { cwd: dir, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
    if (process.env.BATON_TEST_LOG) process.stderr.write(`[baton ${backend}] ${d.toString()}`);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitHealthy(baseUrl, child, () => output);
  return {
    info: { backend, baseUrl, bin, dir, env, adminToken, adminEmail: admin.email, ...(schema ? { schema } : {}) },
    child,
    cleanup,
  };
}

function psql(url: string, sql: string): void {
  execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: 'pipe' });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const bin = binary();
  const running: Running[] = [];
  try {
    await startAll(bin, running);
  } catch (error) {
    await stopAll(running);
    throw error;
  }
  project.provide('servers', running.filter((r) => !r.info.schema).map((r) => r.info));
  project.provide('schemaServers', running.filter((r) => r.info.schema).map((r) => r.info));
  return () => stopAll(running);
}

async function startAll(bin: string, running: Running[]): Promise<void> {
  for (const schema of [undefined, ...SCHEMAS]) await startBoth(bin, running, schema);
}

async function startBoth(bin: string, running: Running[], schema?: (typeof SCHEMAS)[number]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-clients-'));
  const dropDir = () => rmSync(dir, { recursive: true, force: true });
  try {
    running.push(await start(bin, 'sqlite', join(dir, 'baton.sqlite3'), dir, dropDir, schema));
  } catch (error) {
    dropDir();
    throw error;
  }

  const pgUrl = process.env.BATON_TEST_POSTGRES_URL;
  if (!pgUrl) return;
  const name = `baton_clients_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new URL(pgUrl);
  admin.pathname = '/postgres';
  const scratch = new URL(pgUrl);
  scratch.pathname = `/${name}`;
  const pgDir = mkdtempSync(join(tmpdir(), 'baton-clients-pg-'));
  const drop = () => {
    rmSync(pgDir, { recursive: true, force: true });
    psql(admin.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    psql(admin.toString(), `CREATE DATABASE ${name}`);
    running.push(await start(bin, 'postgres', scratch.toString(), pgDir, drop, schema));
  } catch (error) {
    drop();
    throw error;
  }
}

async function stopAll(running: Running[]): Promise<void> {
  for (const r of running) {
    r.child.kill('SIGTERM');
    await new Promise<void>((done) => {
      if (r.child.exitCode !== null) return done();
      const timer = setTimeout(() => {
        r.child.kill('SIGKILL');
        done();
      }, 5000);
      r.child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
    try {
      r.cleanup();
    } catch (error) {
      console.error('cleanup failed:', error);
    }
  }
}
