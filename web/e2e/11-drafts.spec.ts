/**
 * 18–23. Nobody loses a draft. Only Save, Cancel, Escape (asking when the
 * draft changed), losing the lock and leaving the page end an edit: focus
 * leaving the form saves nothing (a click on its heading, another window, a
 * browser that does not focus a button on click), a form scrolled out of a
 * long list keeps its text and its lock, leaving the page or signing out
 * asks, a duplicated tab is a tab of its own, "Wait for it" reaches a hidden
 * tab, and a sign-in that ends under a draft asks for the password over the
 * page (axe finds nothing serious or critical in that dialog) and the draft
 * is saved after.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { Api, DEMO, card, cardInput, expect, freshCase, openCase, shortSignInServer, signIn, test, type Scene } from './support';
import type { ServerInfo } from './global-setup';

const WITHIN_1S = { timeout: 1_000 };

interface CaseJson {
  pages: { id: number; title: string }[];
  edgenotes: { id: number; slug: string; caption: string; content: string }[];
}

/** The requests a tab sends of a method, by path. */
function sent(page: Page, method: string): string[] {
  const paths: string[] = [];
  page.on('request', (request) => {
    if (request.method() === method) paths.push(new URL(request.url()).pathname);
  });
  return paths;
}

/** What baton says about a record's lock now. */
async function lockState(api: Api, type: string, id: number): Promise<string> {
  return (await api.call<{ state: string }>('GET', `/locks/status?lockableType=${type}&lockableParam=${id}`)).state;
}

/**
 * Safari (and Firefox on macOS) do not focus a button on click: the field
 * is blurred on mousedown with no related target, and the click lands
 * after. Emulated as Safari behaves: on a button's mousedown, no default,
 * and the focus goes to the button's nearest focusable ancestor, or the
 * field is blurred when there is none.
 */
function noFocusOnClick(): void {
  document.addEventListener(
    'mousedown',
    (event) => {
      const button = event.target instanceof Element ? event.target.closest('button') : null;
      if (!button) return;
      event.preventDefault();
      let up = button.parentElement;
      while (up && !(up.tabIndex >= 0)) up = up.parentElement;
      if (up) up.focus();
      else if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    },
    true,
  );
}

test('18. Focus leaving the form saves nothing: its heading, another window, Cancel where a click focuses no button; Escape asks', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const note = (await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]!;
  const bob = await signIn(browser, server, DEMO.bob, { init: noFocusOnClick });
  await openCase(bob.page, server, scene.slug);
  const patches = sent(bob.page, 'PATCH');
  const form = bob.page.getByTestId(`field-Edgenote-${note.id}`);
  const caption = form.getByRole('textbox', { name: 'Harbour chart caption' });

  // a click on a read-only field of a record of several fields takes nothing
  await caption.click();
  await expect(caption).not.toBeEditable();
  expect(await lockState(api, 'Edgenote', note.id)).toBe('unlocked');

  await form.getByRole('button', { name: 'Edit Harbour chart' }).click();
  await expect(caption).toBeEditable();
  await caption.fill('Half a capt');
  // a click on the form's own heading
  await form.getByTestId('record-title').click();
  // another window: the field hears a blur with no related target, as when the person switches windows
  await caption.evaluate((el) => el.dispatchEvent(new FocusEvent('focusout', { bubbles: true, relatedTarget: null })));
  await bob.page.waitForTimeout(300);
  expect(patches).toEqual([]);
  await expect(caption).toBeEditable();
  await expect(caption).toHaveValue('Half a capt');
  expect(await lockState(api, 'Edgenote', note.id)).toBe('locked');

  // Cancel, on a browser that does not focus the button: the draft is dropped, nothing saved, the lock released
  await form.getByRole('button', { name: 'Cancel editing Harbour chart' }).click();
  await expect(caption).not.toBeEditable();
  await expect(caption).toHaveValue('Harbour chart');
  await expect.poll(() => lockState(api, 'Edgenote', note.id)).toBe('unlocked');
  expect(patches).toEqual([]);

  // Escape asks first when the draft changed: kept when the person says no, dropped when yes
  await form.getByRole('button', { name: 'Edit Harbour chart' }).click();
  await caption.fill('Another thought');
  const asked: string[] = [];
  bob.page.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await caption.press('Escape');
  await expect.poll(() => asked).toEqual(['Discard your changes to Harbour chart?']);
  await expect(caption).toHaveValue('Another thought');
  await expect(caption).toBeEditable();
  bob.page.once('dialog', (dialog) => void dialog.accept());
  await caption.press('Escape');
  await expect(caption).toHaveValue('Harbour chart');
  await expect.poll(() => lockState(api, 'Edgenote', note.id)).toBe('unlocked');
  expect(patches).toEqual([]);
  expect((await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]!.caption).toBe('Harbour chart');
  await bob.context.close();
});

/** A case whose page has `count` cards: a long list, rendered by what is on screen. */
async function longCase(server: ServerInfo, count: number): Promise<Scene & { pageId: number }> {
  const scene = await freshCase(server);
  const alice = await Api.login(server.apiUrl, DEMO.alice);
  const pageId = (await alice.call<CaseJson>('GET', `/cases/${scene.slug}`)).pages[0]!.id;
  for (let i = scene.cards.length; i < count; i++) await alice.call('POST', `/pages/${pageId}/cards`, { card: { content: `Card number ${i + 1}.` } });
  return { ...scene, pageId };
}

test('19. A form scrolled out of a long list and back keeps its text and its lock', async ({ browser, server }) => {
  const scene = await longCase(server, 70);
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const [first] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  await expect(bob.page.locator('[data-virtual-count="70"]')).toHaveCount(1);
  const deletes = sent(bob.page, 'DELETE');
  await cardInput(bob.page, first!.id).click();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' Scrolled away and back.');

  await bob.page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  // the cards at the end are on screen now, those at the top are not
  await expect(bob.page.getByRole('textbox', { name: 'Card 70', exact: true })).toBeInViewport();
  await expect(bob.page.getByRole('textbox', { name: 'Card 20', exact: true })).toHaveCount(0);
  await bob.page.waitForTimeout(500);
  expect(deletes).toEqual([]);
  expect(await lockState(api, 'Card', first!.id)).toBe('locked');

  await bob.page.evaluate(() => window.scrollTo(0, 0));
  await expect(cardInput(bob.page, first!.id)).toBeInViewport();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await expect(cardInput(bob.page, first!.id)).toHaveValue(`${first!.content} Scrolled away and back.`);
  await cardInput(bob.page, first!.id).press('Control+s');
  await expect.poll(async () => (await api.call<{ content: string }>('GET', `/cards/${first!.id}`)).content).toBe(`${first!.content} Scrolled away and back.`);
  await expect.poll(() => lockState(api, 'Card', first!.id)).toBe('unlocked');
  await bob.context.close();
});

test('20. Leaving the page and signing out ask while a draft has changes', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  await cardInput(bob.page, first!.id).click();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' Not saved yet.');
  const draft = `${first!.content} Not saved yet.`;

  // sign out: asked; the person stays
  const asked: string[] = [];
  bob.page.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await bob.page.getByRole('button', { name: 'Sign out' }).click();
  await expect.poll(() => asked).toEqual(['You have unsaved changes. Sign out and discard them?']);
  await expect(bob.page.getByTestId('me')).toBeVisible();
  await expect(cardInput(bob.page, first!.id)).toHaveValue(draft);

  // leaving the page (closing or reloading the tab): the browser asks; the person stays
  const unloadAsked = bob.page.waitForEvent('dialog');
  await bob.page.close({ runBeforeUnload: true });
  const leave = await unloadAsked;
  expect(leave.type()).toBe('beforeunload');
  await leave.dismiss();
  expect(bob.page.isClosed()).toBe(false);
  await expect(cardInput(bob.page, first!.id)).toHaveValue(draft);

  // without changes nobody is asked
  await card(bob.page, first!.id).getByRole('button', { name: 'Cancel editing Card 1' }).click();
  await expect(cardInput(bob.page, first!.id)).toHaveValue(first!.content);
  bob.page.on('dialog', (dialog) => {
    asked.push(dialog.type());
    void dialog.dismiss();
  });
  await bob.page.close({ runBeforeUnload: true });
  await expect.poll(() => bob.page.isClosed()).toBe(true);
  expect(asked).toHaveLength(1);
  await bob.context.close();
});

test('21. A duplicated tab takes a session id of its own: it sees its first tab’s lock as another tab’s, and each sees the other’s edits', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const [first, second] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  const original = await bob.page.evaluate(() => sessionStorage.getItem('baton.sessionId'));
  expect(original).toBeTruthy();
  await cardInput(bob.page, first!.id).click();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();

  // "Duplicate tab": a new tab with a copy of the first one's sessionStorage
  const copy = await bob.context.newPage();
  await copy.addInitScript((id) => {
    if (sessionStorage.getItem('e2e.duplicated')) return;
    sessionStorage.setItem('e2e.duplicated', '1');
    sessionStorage.setItem('baton.sessionId', id);
  }, original!);
  await openCase(copy, server, scene.slug);
  await expect(card(copy, first!.id).getByTestId('lock-badge')).toHaveText(/You are editing this in another tab/);
  await expect(cardInput(copy, first!.id)).not.toBeEditable();
  const own = await copy.evaluate(() => sessionStorage.getItem('baton.sessionId'));
  expect(own).not.toBe(original);

  // the copy's edit reaches the first tab (not dropped as its own echo), and the other way round
  await cardInput(copy, second!.id).click();
  await expect(cardInput(copy, second!.id)).toBeEditable();
  await copy.keyboard.press('End');
  await copy.keyboard.type(' From the copy.');
  await cardInput(copy, second!.id).press('Control+s');
  await expect(cardInput(bob.page, second!.id)).toHaveValue(`${second!.content} From the copy.`, WITHIN_1S);
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' From the first.');
  await cardInput(bob.page, first!.id).press('Control+s');
  await expect(cardInput(copy, first!.id)).toHaveValue(`${first!.content} From the first.`, WITHIN_1S);
  await bob.context.close();
});

/**
 * A tab the person can hide: `window.__hide(true)` makes the page hidden (as
 * when the person switches to another tab), and notifications are allowed
 * and recorded in `window.__notified`.
 */
function hideableWithNotifications(): void {
  let hidden = false;
  const w = window as unknown as { __hide: (to: boolean) => void; __notified: string[] };
  w.__notified = [];
  Object.defineProperty(document, 'visibilityState', { get: () => (hidden ? 'hidden' : 'visible'), configurable: true });
  Object.defineProperty(document, 'hidden', { get: () => hidden, configurable: true });
  w.__hide = (to: boolean) => {
    hidden = to;
    document.dispatchEvent(new Event('visibilitychange'));
  };
  class Recorded {
    static permission = 'granted';
    static requestPermission = () => Promise.resolve('granted');
    constructor(title: string) {
      w.__notified.push(title);
    }
  }
  Object.defineProperty(window, 'Notification', { value: Recorded, configurable: true });
}

test('22. "Wait for it" tells a hidden tab: in the page, in its title, and by a notification', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol, { init: hideableWithNotifications });
  await openCase(bob.page, server, scene.slug);
  await openCase(carol.page, server, scene.slug);
  await cardInput(bob.page, first!.id).click();
  await expect(card(carol.page, first!.id).getByTestId('lock-badge')).toHaveText(/Bob is editing/);
  await card(carol.page, first!.id).getByRole('button', { name: 'Notify me / wait for Card 1' }).click();
  await expect(card(carol.page, first!.id).getByTestId('line-place')).toHaveText('You are next');
  const title = await carol.page.title();
  await carol.page.evaluate(() => (window as unknown as { __hide: (to: boolean) => void }).__hide(true));

  // Bob is done: the card is handed to Carol's hidden tab
  await card(bob.page, first!.id).getByRole('button', { name: 'Cancel editing Card 1' }).click();
  await expect(card(carol.page, first!.id)).toHaveAttribute('data-lock-state', 'owned', WITHIN_1S);
  await expect(carol.page).toHaveTitle(`It's yours: Card 1 · ${title}`);
  expect(await carol.page.evaluate(() => (window as unknown as { __notified: string[] }).__notified)).toEqual(["It's yours: Card 1"]);
  await expect(card(carol.page, first!.id).getByTestId('field-notice')).toHaveText("It's yours: Card 1. You can edit it now.");
  // shown again: the title is the page's own
  await carol.page.evaluate(() => (window as unknown as { __hide: (to: boolean) => void }).__hide(false));
  await expect(carol.page).toHaveTitle(title);
  await bob.context.close();
  await carol.context.close();
});

test('23. A sign-in that ends under a draft: the password is asked over the page, the draft stays, and saves after', async ({ browser }, info) => {
  const server = shortSignInServer(info.project.name);
  // sign-ins end after 8 s here: the case is made as it is needed
  const scene = await freshCase(server);
  const [first] = scene.cards;
  // axe's script goes in with the CSP bypassed (as in 10-accessibility.spec.ts)
  const bob = await signIn(browser, server, DEMO.bob, { bypassCSP: true });
  const firstToken = await bob.page.evaluate(() => localStorage.getItem('baton.token'));
  await openCase(bob.page, server, scene.slug);
  await cardInput(bob.page, first!.id).click();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' Across the end of a sign-in.');
  const draft = `${first!.content} Across the end of a sign-in.`;

  // the dialog comes over the page, before the end; the person answers after it
  const dialog = bob.page.getByTestId('sign-in-again');
  await expect(dialog).toBeVisible({ timeout: 10_000 });
  await expect(dialog.getByRole('heading')).toHaveText(/Your sign-in (is ending|has ended)/);
  await expect.poll(async () => (await fetch(`${server.apiUrl}/me`, { headers: { Authorization: `Bearer ${firstToken}` } })).status, { timeout: 10_000 }).toBe(401);
  await expect(bob.page.getByTestId('case-editor')).toBeAttached();
  await expect(cardInput(bob.page, first!.id)).toHaveValue(draft);
  const { violations } = await new AxeBuilder({ page: bob.page }).analyze();
  console.log(`axe sign-in dialog: ${violations.map((v) => `${v.id} (${v.impact ?? 'unknown'}): ${v.nodes.length}`).join(', ') || 'no violations'}`);
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await dialog.getByLabel('Password').fill(DEMO.bob.password);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await expect(dialog).toHaveCount(0);

  // carried on: the same draft, the same lock, saved
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await expect(cardInput(bob.page, first!.id)).toHaveValue(draft);
  await cardInput(bob.page, first!.id).press('Control+s');
  const api = await Api.login(server.apiUrl, DEMO.alice);
  await expect.poll(async () => (await api.call<{ content: string }>('GET', `/cards/${first!.id}`)).content).toBe(draft);
  await expect(bob.page.getByTestId('me')).toContainText('Bob');
  await bob.context.close();
});
