// Builds the page (src/page → public/app.js, with @baton/client bundled from
// its TypeScript source) and the server (src/server → dist/main.js).
import { build } from 'esbuild';

const kit = new URL('../../clients/core/src/index.ts', import.meta.url).pathname;

await build({
  entryPoints: ['src/page/main.ts'],
  outfile: 'public/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  alias: { '@baton/client': kit },
  logLevel: 'warning',
});

await build({
  entryPoints: ['src/server/main.ts'],
  outfile: 'dist/main.js',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
