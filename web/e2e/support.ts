import { mkdirSync, readFileSync, copyFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { test as base, expect, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from '@playwright/test';
import type { ServerInfo } from './global-setup';

export { expect };

export const ARTIFACTS = resolve(import.meta.dirname, 'artifacts');
export const DOCS = resolve(import.meta.dirname, '..', 'docs');

export const DEMO = {
  alice: { email: 'alice@example.com', name: 'Alice', password: 'demo' },
  bob: { email: 'bob@example.com', name: 'Bob', password: 'demo' },
  carol: { email: 'carol@example.com', name: 'Carol', password: 'demo' },
} as const;
export const DEMO_CASE = 'sample-case';

export interface Person {
  email: string;
  name: string;
  password: string;
}

/** A small REST client for setting scenes up (the browser does the rest). */
export class Api {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  static async login(baseUrl: string, who: Person): Promise<Api> {
    const response = await fetch(`${baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: who.email, password: who.password }),
    });
    if (!response.ok) throw new Error(`login ${who.email}: ${response.status} ${await response.text()}`);
    const { token } = (await response.json()) as { token: string };
    return new Api(baseUrl, token);
  }

  async call<T>(method: string, path: string, body?: unknown, expected = [200, 201, 204]): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!expected.includes(response.status)) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  }
}

export interface Scene {
  slug: string;
  title: string;
  cards: { id: number; content: string }[];
}

/** A case of its own for one scenario: Alice manages it, Bob and Carol edit it. */
export async function freshCase(server: ServerInfo): Promise<Scene> {
  const alice = await Api.login(server.apiUrl, DEMO.alice);
  const slug = `case-${randomBytes(4).toString('hex')}`;
  const title = `Scenario ${slug}`;
  await alice.call('POST', '/cases', { case: { slug, title } });
  for (const who of [DEMO.bob, DEMO.carol]) {
    await alice.call('POST', `/cases/${slug}/memberships`, { membership: { email: who.email, role: 'editor' } });
  }
  const page = await alice.call<{ id: number }>('POST', `/cases/${slug}/pages`, { page: { title: 'The harbour' } });
  const cards = [];
  for (const content of ['The first card.', 'The second card.']) {
    const card = await alice.call<{ id: number; content: string }>('POST', `/pages/${page.id}/cards`, { card: { content } });
    cards.push({ id: card.id, content: card.content });
  }
  await alice.call('POST', `/cases/${slug}/edgenotes`, {
    edgenote: { slug: 'chart', caption: 'Harbour chart', content: 'https://example.com/chart.png' },
  });
  return { slug, title, cards };
}

/** One person's browser window: their own context (cookies, storage), one tab. */
export interface Window {
  context: BrowserContext;
  page: Page;
}

export async function signIn(
  browser: Browser,
  server: ServerInfo,
  who: Person,
  options: BrowserContextOptions & { init?: () => void } = {},
): Promise<Window> {
  const { init, ...contextOptions } = options;
  const context = await browser.newContext(contextOptions);
  // a script every page of the window runs before the app (a browser's ways, emulated)
  if (init) await context.addInitScript(init);
  const page = await context.newPage();
  page.on('pageerror', (error) => console.warn(`[${who.name}] page error: ${error.message}`));
  await page.goto(`${server.appUrl}/`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('me')).toContainText(who.name);
  return { context, page };
}

/** Opens a case in a tab and waits until it is live. */
export async function openCase(page: Page, server: ServerInfo, slug: string): Promise<void> {
  await page.goto(`${server.appUrl}/#/cases/${slug}`);
  await expect(page.getByTestId('case-editor')).toHaveAttribute('data-status', 'live');
}

export function card(page: Page, id: number): Locator {
  return page.getByTestId(`field-Card-${id}`);
}

/** The card's text field (textarea for editors). */
export function cardInput(page: Page, id: number): Locator {
  return card(page, id).getByTestId('field-input');
}

export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** Puts two windows' screenshots side by side in one PNG, rendered by the same Chromium. */
export async function sideBySide(
  browser: Browser,
  name: string,
  left: { label: string; path: string },
  right: { label: string; path: string },
): Promise<string> {
  const img = (p: string) => `data:image/png;base64,${readFileSync(p).toString('base64')}`;
  const context = await browser.newContext({ viewport: { width: 1840, height: 980 } });
  const page = await context.newPage();
  await page.setContent(`<!doctype html><html><body style="margin:0;background:#d0d7de;font:600 18px system-ui,sans-serif">
    <div style="display:flex;gap:20px;padding:12px">
      ${[left, right]
        .map(
          (w) => `<figure style="margin:0"><figcaption style="padding:4px 0 8px">${w.label}</figcaption>
          <img style="display:block;width:900px;border:1px solid #57606a" src="${img(w.path)}"></figure>`,
        )
        .join('')}
    </div></body></html>`);
  await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await context.close();
  return path;
}

export function publish(path: string, file: string): void {
  mkdirSync(DOCS, { recursive: true });
  const target = join(DOCS, file);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(path, target);
}

/** The scenario's server, by project (sqlite, postgres). */
export const test = base.extend<{ server: ServerInfo }>({
  server: async ({}, use, testInfo) => {
    const servers = JSON.parse(process.env.BATON_E2E_SERVERS ?? '{}') as Record<string, ServerInfo>;
    const server = servers[testInfo.project.name];
    if (!server) throw new Error(`no baton for project ${testInfo.project.name}`);
    await use(server);
  },
});

/** The project's baton whose sign-ins end within seconds (`BATON_TOKEN_TTL`, see global-setup.ts). */
export function shortSignInServer(project: string): ServerInfo {
  const servers = JSON.parse(process.env.BATON_E2E_SERVERS ?? '{}') as Record<string, ServerInfo>;
  const server = servers[`${project}-short-sign-in`];
  if (!server) throw new Error(`no short sign-in baton for project ${project}`);
  return server;
}

/** Prefix for artifact names: the backend, so both runs keep theirs. */
export function artifactName(server: ServerInfo, name: string): string {
  return `${server.backend}-${name}`;
}
