import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const resolve = {
  alias: {
    '@baton/client': here('./core/src/index.ts'),
    '@baton/react': here('./react/src/index.ts'),
  },
};

/** Tests of the kit alone: a fake transport and fake timers, no server (`vitest run --project unit`). */
const UNIT = ['core/test/units.test.ts', 'core/test/unit/**/*.test.ts', 'react/test/unit/**/*.test.tsx'];

export default defineConfig({
  resolve,
  test: {
    projects: [
      {
        resolve,
        test: { name: 'unit', include: UNIT },
      },
      {
        resolve,
        test: {
          name: 'server',
          include: ['core/test/**/*.test.ts', 'react/test/**/*.test.tsx'],
          exclude: UNIT,
          // real baton servers (SQLite, and PostgreSQL when BATON_TEST_POSTGRES_URL is set)
          globalSetup: ['./test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // every file makes its own users and cases, so files run in parallel
          fileParallelism: true,
        },
      },
    ],
  },
});
