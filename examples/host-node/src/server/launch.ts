/**
 * Runs a baton server for the host: its own SQLite file in a directory, the
 * host's schema, CORS open to the host's page, and an API key for the host.
 * `npm start` uses it when no BATON_URL is given, and the tests for each run.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export interface BatonLaunch {
  /** The baton binary. */
  bin: string;
  /** Where its SQLite database (and, with `keep`, its secret and the host's key) live. */
  dir: string;
  /** The schema file declaring the host's external type. */
  schema: string;
  /** The host page's origins, allowed by CORS. */
  corsOrigins: string[];
  /** The address to listen on (default: a free port on 127.0.0.1). */
  port?: number;
  /** The API key's name. */
  keyName: string;
  /**
   * Keep the JWT secret and the API key in `dir` and reuse them on the next
   * start (for `npm start`); otherwise both are new each time (the tests).
   */
  keep?: boolean;
  /** More environment for baton (lock lifetimes and the like). */
  env?: Record<string, string>;
  /** Where baton's log lines go (default: dropped unless baton fails to start). */
  log?: (chunk: string) => void;
}

export interface RunningBaton {
  url: string;
  apiKey: string;
  /** Runs a baton command on the same database, e.g. `['key', 'revoke', 'host']`. */
  cli(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
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

/** The baton binary: BATON_BIN, else a cargo build of this repository, else `baton` on the PATH. */
export function findBaton(repoRoot: string): string {
  if (process.env.BATON_BIN) return resolve(process.env.BATON_BIN);
  const targets = [process.env.CARGO_TARGET_DIR, join(repoRoot, 'target')].filter((t): t is string => !!t);
  for (const target of targets) {
    for (const profile of ['release', 'debug']) {
      const bin = join(resolve(repoRoot, target), profile, 'baton');
      if (existsSync(bin)) return bin;
    }
  }
  return 'baton';
}

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) =>
    execFile(bin, args, { cwd, env }, (error, stdout, stderr) => {
      if (error) fail(new Error(`baton ${args.join(' ')} failed: ${stderr || error.message}`));
      else done(stdout);
    }),
  );
}

export async function startBaton(launch: BatonLaunch): Promise<RunningBaton> {
  mkdirSync(launch.dir, { recursive: true });
  const port = launch.port ?? (await freePort());
  const secretFile = join(launch.dir, 'jwt-secret');
  let secret = launch.keep && existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : '';
  if (!secret) {
    secret = randomBytes(32).toString('hex');
    if (launch.keep) writeFileSync(secretFile, secret, { mode: 0o600 });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: join(launch.dir, 'baton.sqlite3'),
    BATON_SCHEMA: resolve(launch.schema),
    BATON_JWT_SECRET: secret,
    BATON_BIND: `127.0.0.1:${port}`,
    BATON_CORS_ORIGINS: launch.corsOrigins.join(','),
    RUST_LOG: process.env.RUST_LOG ?? 'warn',
    ...launch.env,
  };
  const cli = (args: string[]) => run(launch.bin, args, launch.dir, env);
  // baton reads a .env from its working directory: it runs in its own
  await cli(['migrate']);

  const keyFile = join(launch.dir, 'api-key');
  let apiKey = launch.keep && existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '';
  if (!apiKey) {
    // a key is shown once: a kept name whose key file is gone is replaced
    if (launch.keep) await cli(['key', 'revoke', launch.keyName]).catch(() => '');
    apiKey = (await cli(['key', 'add', '--name', launch.keyName])).trim();
    if (launch.keep) writeFileSync(keyFile, apiKey, { mode: 0o600 });
  }

  let output = '';
  const child: ChildProcess = spawn(launch.bin, ['serve'], { cwd: launch.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    launch.log?.(chunk.toString());
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`baton exited with ${child.exitCode}:\n${output}`);
    const healthy = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`baton did not answer at ${url}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      child.kill('SIGTERM');
    });
  return { url, apiKey, cli, stop };
}
