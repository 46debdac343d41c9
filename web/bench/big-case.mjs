#!/usr/bin/env node
/**
 * The big-case benchmark: seeds a case of BENCH_RECORDS records (default
 * 10,000: BENCH_PAGES pages, the rest cards spread over them) on a real
 * baton, opens it in Chromium as an editor, and prints
 *
 *   - time to first screen: from the moment the case's data (GET
 *     /cases/:slug) has arrived to the first frame painted with its records;
 *   - the DOM's size then;
 *   - Edit latency: from the click on a card's "Edit" to the frame that
 *     shows its text editable (the lock taken on the server in between),
 *     at the top of the case and in the middle of a long page, median and
 *     worst of BENCH_EDITS runs each.
 *
 * A measurement, not a test: it asserts nothing about speed.
 *
 *   BATON_BIN=…/debug/baton node bench/big-case.mjs
 *
 * BATON_BIN (default /root/.cache/baton-target/debug/baton) serves the
 * app from the web/dist of the checkout it was built in; DATABASE_URL
 * picks the database (default: a fresh SQLite file). BENCH_SHOT=path
 * saves a screenshot of the first screen.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 20);
const EDITS = Number(process.env.BENCH_EDITS ?? 7);
const CONCURRENCY = 16;
const bin = process.env.BATON_BIN ?? '/root/.cache/baton-target/debug/baton';

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function startBaton() {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const port = await freePort();
  const child = spawn(bin, ['serve', '--demo'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: process.env.DATABASE_URL ?? join(dir, 'baton.sqlite3'),
      BATON_BIND: `127.0.0.1:${port}`,
      BATON_JWT_SECRET: randomBytes(24).toString('hex'),
      RUST_LOG: 'warn',
    },
  });
  let log = '';
  child.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`baton exited: ${log}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, stop: () => stop(child, dir) };
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`baton did not start: ${log}`);
}

async function stop(child, dir) {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

async function call(url, token, method, path, body) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Runs `jobs` with at most CONCURRENCY at once. */
async function pool(jobs) {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function seed(url) {
  const { token } = await call(url, null, 'POST', '/auth/login', { email: 'alice@example.com', password: 'demo' });
  const slug = `big-${randomBytes(3).toString('hex')}`;
  await call(url, token, 'POST', '/cases', { case: { slug, title: `A case of ${RECORDS.toLocaleString('en')} records` } });
  await call(url, token, 'POST', `/cases/${slug}/memberships`, { membership: { email: 'bob@example.com', role: 'editor' } });
  const pages = [];
  for (let p = 0; p < PAGES; p++) pages.push(await call(url, token, 'POST', `/cases/${slug}/pages`, { page: { title: `Chapter ${p + 1}` } }));
  const cards = RECORDS - PAGES;
  const started = Date.now();
  const jobs = [];
  for (let c = 0; c < cards; c++) {
    const page = pages[c % PAGES];
    jobs.push(() => call(url, token, 'POST', `/pages/${page.id}/cards`, { card: { content: `Card ${c + 1}: a note of a sentence or two, as a case's cards are.` } }));
  }
  await pool(jobs);
  console.log(`seeded ${PAGES} pages and ${cards} cards (${RECORDS} records) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return slug;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Clicks "Edit" on a card and resolves with the ms until the frame that shows its text editable; then cancels. */
async function editLatency(page, testId) {
  const ms = await page.evaluate(
    (id) =>
      new Promise((resolve, reject) => {
        const form = document.querySelector(`[data-testid="${id}"]`);
        const button = form && [...form.querySelectorAll('button')].find((b) => (b.getAttribute('aria-label') ?? '').startsWith('Edit '));
        if (!form || !button) return reject(new Error(`no Edit button in ${id}`));
        const open = () => {
          const text = form.querySelector('textarea');
          return text && !text.readOnly;
        };
        const t0 = performance.now();
        const observer = new MutationObserver(() => {
          if (!open()) return;
          observer.disconnect();
          requestAnimationFrame(() => resolve(performance.now() - t0));
        });
        observer.observe(form, { attributes: true, childList: true, subtree: true });
        button.click();
      }),
    testId,
  );
  // release it again: Escape in the open text
  await page.locator(`[data-testid="${testId}"] textarea`).press('Escape');
  await page.locator(`[data-testid="${testId}"]`).and(page.locator('[data-lock-state="unlocked"]')).waitFor({ timeout: 10_000 });
  return ms;
}

async function main() {
  const baton = await startBaton();
  try {
    const slug = await seed(baton.url);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    // what the page does, timed in the page: the case's data arriving, the first records in the DOM, the frame after
    await context.addInitScript((caseSlug) => {
      const marks = (window.__bench = { dataAt: null, firstRecordAt: null, paintedAt: null });
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          if (entry.name.endsWith(`/cases/${caseSlug}`) && marks.dataAt === null) marks.dataAt = entry.responseEnd;
        }
      }).observe({ type: 'resource', buffered: true });
      const watch = new MutationObserver(() => {
        if (marks.firstRecordAt !== null || !document.querySelector('[data-testid^="field-Card-"]')) return;
        marks.firstRecordAt = performance.now();
        watch.disconnect();
        requestAnimationFrame(() => setTimeout(() => (marks.paintedAt = performance.now()), 0));
      });
      document.addEventListener('DOMContentLoaded', () => watch.observe(document.body, { childList: true, subtree: true }));
    }, slug);
    const page = await context.newPage();
    await page.goto(`${baton.url}/`);
    await page.getByLabel('Email').fill('bob@example.com');
    await page.getByLabel('Password').fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('me').waitFor();
    await page.goto(`${baton.url}/#/cases/${slug}`);
    await page.locator('[data-testid="case-editor"][data-status="live"]').waitFor({ timeout: 120_000 });
    await page.locator('[data-testid^="field-Card-"]').first().waitFor({ timeout: 120_000 });
    await page.waitForTimeout(500);
    const marks = await page.evaluate(() => window.__bench);
    const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    const rendered = await page.locator('[data-testid^="field-Card-"]').count();
    if (process.env.BENCH_SHOT) await page.screenshot({ path: process.env.BENCH_SHOT });

    const firstCards = await page.locator('[data-testid^="field-Card-"]').evaluateAll((els) => els.slice(0, 3).map((e) => e.dataset.testid));
    const top = [];
    for (let i = 0; i < EDITS; i++) top.push(await editLatency(page, firstCards[i % firstCards.length]));
    // the middle of the first page: scrolled there, so the rows there are the ones rendered
    const middle = [];
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / (2 * 20)));
    await page.waitForTimeout(300);
    const visible = await page.locator('[data-testid^="field-Card-"]').evaluateAll((els) =>
      els.filter((e) => {
        const r = e.getBoundingClientRect();
        return r.top > 0 && r.bottom < window.innerHeight;
      }).map((e) => e.dataset.testid),
    );
    for (let i = 0; i < EDITS && visible.length > 0; i++) middle.push(await editLatency(page, visible[i % visible.length]));

    const fmt = (ms) => `${Math.round(ms)} ms`;
    console.log(`records: ${RECORDS} (${PAGES} pages, ${RECORDS - PAGES} cards)`);
    console.log(`data arrived (GET /cases/:slug done): ${fmt(marks.dataAt)} after navigation start`);
    console.log(`time to first screen: ${fmt(marks.paintedAt - marks.dataAt)} after the data arrived (first record in the DOM after ${fmt(marks.firstRecordAt - marks.dataAt)})`);
    console.log(`DOM: ${nodes} elements, ${rendered} card forms rendered`);
    console.log(`Edit latency, top of the case: median ${fmt(median(top))}, worst ${fmt(Math.max(...top))} (${top.length} runs)`);
    if (middle.length) console.log(`Edit latency, scrolled into a page: median ${fmt(median(middle))}, worst ${fmt(Math.max(...middle))} (${middle.length} runs)`);
    await browser.close();
  } finally {
    await baton.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
