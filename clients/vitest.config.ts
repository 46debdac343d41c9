import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@baton/client': here('./core/src/index.ts'),
      '@baton/react': here('./react/src/index.ts'),
    },
  },
  test: {
    include: ['core/test/**/*.test.ts', 'react/test/**/*.test.tsx'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // every file makes its own users and cases, so files run in parallel
    fileParallelism: true,
  },
});
