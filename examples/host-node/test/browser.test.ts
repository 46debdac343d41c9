/**
 * The host's page in a real Chromium (Debian's, driven by playwright-core):
 * Alice and Bob, each in a browser context of their own, edit the same
 * invoice. Bob's lock shows on Alice's page; Alice takes over with "Edit
 * anyway"; her save appears on Bob's page; Bob's stale draft is refused and
 * the host's database keeps Alice's work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { row, startWorld, type World } from './support.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('the host’s page in Chromium', () => {
  let world: World;
  let browser: Browser;

  beforeAll(async () => {
    [world, browser] = await Promise.all([startWorld(), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
  });
  afterAll(async () => {
    await browser?.close();
    await world?.stop();
  });

  async function signIn(email: string, password: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error(`[${email}] ${error.message}`));
    await page.goto(world.url);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('tr[data-invoice="inv-2031"]').waitFor();
    return page;
  }

  it('Bob edits, Alice sees it and takes over, her save reaches Bob, his stale save is refused', async () => {
    const alice = await signIn('alice@acme.test', 'alice-pass');
    const bob = await signIn('bob@acme.test', 'bob-pass');
    const rowOf = (page: Page) => page.locator('tr[data-invoice="inv-2031"]');
    const editor = (page: Page) => page.locator('#editor');

    // both are online on the case; Bob takes the invoice's lock
    await expect.poll(() => alice.locator('header .online').textContent()).toContain('Bob Baker');
    await rowOf(bob).getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => editor(bob).locator('.lock-status').textContent()).toContain('You are editing');

    // Alice sees who is editing, and takes over
    await expect.poll(() => rowOf(alice).locator('.editing').textContent()).toBe('Bob Baker is editing');
    await rowOf(alice).getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => editor(alice).locator('.lock-status').textContent()).toContain('Bob Baker is editing this invoice');
    expect(await editor(alice).getByLabel('Customer').isDisabled()).toBe(true);
    await editor(alice).getByRole('button', { name: 'Edit anyway' }).click();
    await expect.poll(() => editor(alice).locator('.lock-status').textContent()).toContain('You are editing');
    await expect.poll(() => editor(bob).locator('.lock-status').textContent()).toContain('Alice Archer took over this invoice');

    // Alice saves; Bob's list shows it at once (the host's announcement, relayed by baton)
    await editor(alice).getByLabel('Customer').fill('Northwind Traders GmbH');
    await editor(alice).getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => alice.locator('#notice').textContent()).toBe('Saved invoice inv-2031.');
    await expect.poll(() => rowOf(bob).locator('.customer').textContent()).toBe('Northwind Traders GmbH');
    await expect.poll(() => rowOf(bob).locator('.editing').textContent()).toBe('');

    // Bob's draft is still in his form; saving it is refused, and the database keeps Alice's work
    await editor(bob).getByLabel('Customer').fill('Bob’s stale draft');
    await editor(bob).getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => editor(bob).locator('.problem').textContent()).toMatch(/^Not saved: /);
    const saved = await row(world.db, 'inv-2031');
    expect(saved).toMatchObject({ customer: 'Northwind Traders GmbH', version: 2 });
    expect(await rowOf(alice).locator('.customer').textContent()).toBe('Northwind Traders GmbH');
  });
});
