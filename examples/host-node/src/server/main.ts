/**
 * `npm start`: the host on http://127.0.0.1:3000 (HOST_PORT), its data in
 * PostgreSQL (HOST_DATABASE_URL, schema HOST_DB_SCHEMA), and baton beside
 * it: BATON_URL and BATON_API_KEY when you run baton yourself, else a baton
 * started here (BATON_BIN, or this repository's cargo build) on a SQLite
 * file in .baton/.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Baton } from './baton.js';
import { HostDb } from './db.js';
import { createHost } from './host.js';
import { findBaton, startBaton, type RunningBaton } from './launch.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const port = Number(env.HOST_PORT ?? 3000);
const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];

let running: RunningBaton | null = null;
let batonUrl = env.BATON_URL;
let apiKey = env.BATON_API_KEY;
if (!batonUrl || !apiKey) {
  const bin = findBaton(join(root, '..', '..'));
  console.log(`starting baton (${bin}) with its data in .baton/`);
  running = await startBaton({
    bin,
    dir: join(root, '.baton'),
    schema: join(root, 'schema.toml'),
    corsOrigins: origins,
    port: Number(env.BATON_PORT ?? 8090),
    keyName: 'host-node',
    keep: true,
    log: (chunk) => process.stderr.write(chunk),
  });
  batonUrl = running.url;
  apiKey = running.apiKey;
}

const db = await HostDb.open(env.HOST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', env.HOST_DB_SCHEMA ?? 'host_node');
await db.seed();
const baton = new Baton({ url: batonUrl, apiKey, caseSlug: env.HOST_CASE ?? 'acme', caseTitle: 'Acme invoices', type: 'Invoice' });
const server = createHost({ db, baton, publicDir: join(root, 'public') });
server.listen(port, '127.0.0.1', () => {
  console.log(`the host is at ${origins[0]} (baton at ${batonUrl})`);
  console.log('sign in as alice@acme.test / alice-pass, bob@acme.test / bob-pass or carol@acme.test / carol-pass');
});

async function shutdown(): Promise<void> {
  server.close();
  server.closeAllConnections();
  await Promise.allSettled([db.close(), running?.stop()]);
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
