import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // the kit from its TypeScript source, as build.mjs bundles it
    alias: { '@baton/client': fileURLToPath(new URL('../../clients/core/src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // each file runs its own baton, host and database schema
    fileParallelism: true,
  },
});
