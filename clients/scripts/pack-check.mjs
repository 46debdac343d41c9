// Packs both packages, installs the tarballs into a scratch project with
// React, and imports them from plain Node: proves `npm pack` makes usable packages.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'baton-pack-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
try {
  const tarballs = ['core', 'react'].map((pkg) => {
    const out = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], join(root, pkg)));
    console.log(`${out[0].filename}: ${out[0].files.length} files, ${out[0].size} bytes`);
    return join(dir, out[0].filename);
  });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, type: 'module' }));
  const react = JSON.parse(run('npm', ['ls', 'react', '--json', '--depth=0'], root)).dependencies.react.version;
  run('npm', ['install', '--no-audit', '--no-fund', ...tarballs, `react@${react}`], dir);
  writeFileSync(
    join(dir, 'check.mjs'),
    `import { BatonClient, LockHeldError } from '@baton/client';
import { BatonProvider, useLock, Lockable } from '@baton/react';
const client = new BatonClient({ baseUrl: 'http://127.0.0.1:1', fetch: async () => { throw new Error('offline'); }, storage: { getItem: () => null, setItem() {} } });
if (typeof BatonProvider !== 'function' || typeof useLock !== 'function' || typeof Lockable !== 'function') throw new Error('missing exports');
if (!(new LockHeldError(409, { code: 'lock_held', message: 'x', lock: {} }) instanceof Error)) throw new Error('bad error class');
console.log('imported @baton/client and @baton/react; session', client.sessionId);
`,
  );
  process.stdout.write(run('node', ['check.mjs'], dir));
  const tsc = join(root, 'node_modules/.bin/tsc');
  writeFileSync(
    join(dir, 'check.ts'),
    `import { BatonClient, type Lock } from '@baton/client';\nimport { useLock } from '@baton/react';\nconst c: BatonClient | null = null; const l: Lock | null = null; void c; void l; void useLock;\n`,
  );
  run(tsc, ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'check.ts'], dir);
  console.log('types resolve from the tarballs');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
