import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests in Debian's Chromium against a real `baton serve --demo`:
 * on a fresh SQLite file always, and on a scratch PostgreSQL database when
 * BATON_TEST_POSTGRES_URL is set (e2e/global-setup.ts starts and stops them).
 * The casebook (the default schema) runs every spec but those named after an
 * example schema; `sqlite-kanban`, `sqlite-book`, `sqlite-api` (and the same on postgres)
 * run only the spec of their schema, on a baton serving that schema.
 */
const SCHEMA_SPECS = /-(kanban|book|api)\.spec\.ts$/;
const projects: { name: string; testDir?: string; testIgnore?: RegExp; testMatch?: RegExp }[] = [
  // pure modules of the app (unit/*.spec.ts): no browser, no server
  { name: 'unit', testDir: 'unit' },
  { name: 'sqlite', testIgnore: SCHEMA_SPECS },
  { name: 'sqlite-kanban', testMatch: /-kanban\.spec\.ts$/ },
  { name: 'sqlite-book', testMatch: /-book\.spec\.ts$/ },
  { name: 'sqlite-api', testMatch: /-api\.spec\.ts$/ },
];
if (process.env.BATON_TEST_POSTGRES_URL) {
  // 2-reconnect.spec.ts runs a SQLite baton of its own: once is enough
  projects.push(
    { name: 'postgres', testIgnore: /reconnect\.spec\.ts$|-(kanban|book|api)\.spec\.ts$/ },
    { name: 'postgres-kanban', testMatch: /-kanban\.spec\.ts$/ },
    { name: 'postgres-book', testMatch: /-book\.spec\.ts$/ },
    { name: 'postgres-api', testMatch: /-api\.spec\.ts$/ },
  );
}

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  globalSetup: './e2e/global-setup.ts',
  // the scenarios share one server per backend and watch each other's tabs: one at a time
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 5_000 },
  reporter: [['list']],
  projects,
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 900, height: 900 },
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
});
