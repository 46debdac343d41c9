// Measures what each package adds to an app: bundled with esbuild, minified,
// then gzipped. Fails when a package is over its budget.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// @baton/client, bytes, minified + gzipped: 12 kB until the kit learnt real networks (the
// watchdog, backoff with Retry-After, cancelled acquires, tombstones, structural sharing,
// typing as activity: +2.1 kB); 13 kB until it kept drafts and one truth of the tab's locks
// (drafts by record, a duplicated tab's own session id, getToken and renewal before `exp`,
// release retries and lost acquires settled, request timeouts, an incremental store whose
// frame costs what it changed: 12.2 → 16.7 kB)
const BUDGET = 17 * 1000;
const REACT_BUDGET = 2.5 * 1000; // @baton/react on its own (react and @baton/client external)

async function measure(entry, external) {
  const result = await build({
    entryPoints: [root + entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external,
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

const core = await measure('core/src/index.ts', []);
const react = await measure('react/src/index.ts', ['react', 'react/jsx-runtime', '@baton/client']);
const kb = (n) => (n / 1000).toFixed(2) + ' kB';
console.log(`@baton/client  ${kb(core.min)} min, ${kb(core.gzip)} min+gzip (budget ${kb(BUDGET)})`);
console.log(`@baton/react   ${kb(react.min)} min, ${kb(react.gzip)} min+gzip (budget ${kb(REACT_BUDGET)}; react and @baton/client external)`);
let over = false;
if (core.gzip > BUDGET) {
  console.error(`@baton/client is over budget by ${core.gzip - BUDGET} bytes`);
  over = true;
}
if (react.gzip > REACT_BUDGET) {
  console.error(`@baton/react is over budget by ${react.gzip - REACT_BUDGET} bytes`);
  over = true;
}
if (over) process.exit(1);
