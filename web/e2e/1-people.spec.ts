/**
 * The six scenarios of the reference app, each with one browser context per
 * person, against a real `baton serve --demo` (see global-setup.ts).
 */
import {
  Api,
  DEMO,
  DEMO_CASE,
  artifactName,
  card,
  cardInput,
  expect,
  freshCase,
  openCase,
  publish,
  shot,
  sideBySide,
  signIn,
  test,
} from './support';

const WITHIN_1S = { timeout: 1_000 };
/** The disconnect grace (1.5 s) plus the reaper and the broadcast, with room for a loaded machine. */
const AFTER_GRACE = { timeout: 8_000 };

test('1. Alice starts editing card 1: Bob sees the badge within 1 s and cannot type', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const alice = await signIn(browser, server, DEMO.alice);
  // demo mode: the sign-in page lists the demo users
  await alice.page.getByRole('button', { name: 'Sign out' }).click();
  await expect(alice.page.getByTestId('demo-users')).toContainText('bob@example.com');
  await alice.page.getByRole('button', { name: /^Alice/ }).click();
  await alice.page.getByRole('button', { name: 'Sign in' }).click();
  await expect(alice.page.getByTestId('me')).toContainText('Alice');
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(alice.page, server, scene.slug);
  await openCase(bob.page, server, scene.slug);
  await expect(bob.page.getByTestId('avatar-stack')).toContainText('Alice, 1 tab');

  await cardInput(alice.page, first!.id).click();
  await cardInput(alice.page, first!.id).fill('Alice is rewriting the first card');

  const badge = card(bob.page, first!.id).getByTestId('lock-badge');
  await expect(badge).toHaveText(/Alice is editing/, WITHIN_1S);
  await expect(cardInput(bob.page, first!.id)).not.toBeEditable();
  await expect(bob.page.getByTestId('announcer')).toContainText('Alice is editing Card 1');
  await shot(bob.page, artifactName(server, '1-bob-sees-badge'));

  // typing and clicking do not get Bob in
  await cardInput(bob.page, first!.id).click();
  await cardInput(bob.page, first!.id).pressSequentially('xyz');
  await expect(cardInput(bob.page, first!.id)).toHaveValue(first!.content);
  await expect(cardInput(bob.page, first!.id)).not.toBeEditable();
  await expect(card(bob.page, first!.id).getByTestId('field-notice')).toContainText(/Alice/);
  await expect(card(alice.page, first!.id)).toHaveAttribute('data-lock-state', 'owned');

  await alice.context.close();
  await bob.context.close();
});

test('2. Bob chooses "Edit anyway" and saves: Alice is told at once, keeps her draft, and her save is refused', async ({
  browser,
  server,
}) => {
  const alice = await signIn(browser, server, DEMO.alice);
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(alice.page, server, DEMO_CASE);
  await openCase(bob.page, server, DEMO_CASE);
  const first = alice.page.getByRole('textbox', { name: 'Card 1', exact: true });
  const id = Number((await first.locator('xpath=ancestor::*[@data-lock-state][1]').getAttribute('data-testid'))!.split('-').pop());

  const aliceDraft = 'The lighthouse on Gull Rock was automated in 1986, and Alice is still writing…';
  await cardInput(alice.page, id).click();
  await cardInput(alice.page, id).fill(aliceDraft);
  await expect(card(bob.page, id).getByTestId('lock-badge')).toHaveText(/Alice is editing/, WITHIN_1S);

  // Alice is a manager, Bob an editor: Alice outranks Bob, so he cannot take over from her.
  // The same scene with Carol (an editor like Bob) holding the card lets him.
  await bob.page.getByRole('button', { name: 'Edit anyway (Card 1)' }).click();
  await expect(card(bob.page, id).getByTestId('outranked')).toHaveText(/Alice outranks you/);
  await expect(cardInput(bob.page, id)).not.toBeEditable();
  await alice.page.getByRole('button', { name: 'Cancel' }).click();
  await expect(card(bob.page, id).getByTestId('lock-badge')).toHaveCount(0);
  await alice.context.close();

  const carol = await signIn(browser, server, DEMO.carol);
  await openCase(carol.page, server, DEMO_CASE);
  const carolDraft = 'The lighthouse on Gull Rock was automated in 1986. Carol adds the keeper’s view…';
  await cardInput(carol.page, id).click();
  await cardInput(carol.page, id).fill(carolDraft);
  await expect(card(bob.page, id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);

  await bob.page.getByRole('button', { name: 'Edit anyway (Card 1)' }).click();
  const banner = card(carol.page, id).getByTestId('takeover-banner');
  await expect(banner).toHaveText(/Bob took over this card/, WITHIN_1S);
  await expect(card(carol.page, id).getByTestId('draft-text')).toHaveValue(carolDraft);
  await expect(card(carol.page, id).getByTestId('lock-badge')).toHaveText(/Bob is editing/);

  const bobText = 'The lighthouse on Gull Rock has been automated. (Bob’s version.)';
  await expect(cardInput(bob.page, id)).toBeEditable();
  await cardInput(bob.page, id).fill(bobText);
  const bobShot = await shot(bob.page, artifactName(server, '2-bob-edits-anyway'));
  const carolShot = await shot(carol.page, artifactName(server, '2-carol-taken-over'));
  const both = await sideBySide(
    browser,
    artifactName(server, '2-edit-anyway-side-by-side'),
    { label: 'Bob chose “Edit anyway”', path: bobShot },
    { label: 'Carol is told at once and keeps her draft', path: carolShot },
  );
  if (server.backend === 'sqlite') publish(both, 'edit-anyway.png');
  await card(bob.page, id).getByRole('button', { name: 'Save' }).click();
  await expect(cardInput(bob.page, id)).toHaveValue(bobText);
  await expect(card(bob.page, id)).toHaveAttribute('data-lock-state', 'unlocked');

  // her next save is refused, with a clear message, and her text is still there
  await card(carol.page, id).getByRole('button', { name: 'Save my text' }).click();
  await expect(card(carol.page, id).getByTestId('field-notice')).toHaveText(/Not saved/);
  await expect(card(carol.page, id).getByTestId('draft-text')).toHaveValue(carolDraft);
  await expect(cardInput(carol.page, id)).toHaveValue(bobText);
  await expect(cardInput(bob.page, id)).toHaveValue(bobText);
  await shot(carol.page, artifactName(server, '2-carol-save-refused'));

  // the server kept Bob's text
  const api = await Api.login(server.apiUrl, DEMO.bob);
  const stored = await api.call<{ content: string }>('GET', `/cards/${id}`);
  expect(stored.content).toBe(bobText);

  await carol.context.close();
  await bob.context.close();
});

test('3. Alice closes her tab while holding a lock: her avatar leaves, the lock is free after the grace', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const alice = await signIn(browser, server, DEMO.alice);
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(alice.page, server, scene.slug);
  await openCase(bob.page, server, scene.slug);
  const aliceAvatar = bob.page.getByTestId('avatar-stack').locator('[data-name="Alice"]');
  await expect(aliceAvatar).toHaveCount(1);

  await cardInput(alice.page, first!.id).click();
  await cardInput(alice.page, first!.id).fill('Unsaved words');
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveText(/Alice is editing/, WITHIN_1S);
  await shot(bob.page, artifactName(server, '3-before-alice-closes'));

  // closed without a goodbye, like a crashed tab or a closed laptop
  await alice.page.close({ runBeforeUnload: false });
  await expect(aliceAvatar).toHaveCount(0, AFTER_GRACE);
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveCount(0, AFTER_GRACE);
  await expect(card(bob.page, first!.id)).toHaveAttribute('data-lock-state', 'unlocked');
  await shot(bob.page, artifactName(server, '3-after-grace'));

  await cardInput(bob.page, first!.id).click();
  await expect(cardInput(bob.page, first!.id)).toBeEditable();
  await expect(card(bob.page, first!.id)).toHaveAttribute('data-lock-state', 'owned');

  await alice.context.close();
  await bob.context.close();
});

test('4. Alice\'s second tab cannot edit what her first tab holds, and says so', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const alice = await signIn(browser, server, DEMO.alice);
  await openCase(alice.page, server, scene.slug);
  const second = await alice.context.newPage();
  await openCase(second, server, scene.slug);
  await expect(second.getByTestId('avatar-stack').locator('[data-name="Alice"]')).toContainText('Alice, 2 tabs');

  await cardInput(alice.page, first!.id).click();
  await cardInput(alice.page, first!.id).fill('From the first tab');
  const badge = card(second, first!.id).getByTestId('lock-badge');
  await expect(badge).toHaveText(/You are editing this in another tab/, WITHIN_1S);
  await expect(cardInput(second, first!.id)).not.toBeEditable();
  await cardInput(second, first!.id).click();
  await cardInput(second, first!.id).pressSequentially('abc');
  await expect(cardInput(second, first!.id)).toHaveValue(first!.content);
  await expect(card(second, first!.id).getByTestId('field-notice')).toBeVisible();
  await shot(second, artifactName(server, '4-second-tab'));

  await alice.context.close();
});

test('5. An admin kicks Bob\'s tab: Bob\'s page says so and stops', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  await cardInput(bob.page, first!.id).click();
  await expect(card(bob.page, first!.id)).toHaveAttribute('data-lock-state', 'owned');

  const alice = await signIn(browser, server, DEMO.alice);
  await alice.page.goto(`${server.appUrl}/#/admin`);
  const row = alice.page.getByTestId('session-row').filter({ hasText: scene.title }).filter({ hasText: 'Bob' });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(`Card ${first!.id}`);
  await shot(alice.page, artifactName(server, '5-admin-open-tabs'));
  await row.getByRole('button', { name: /^Kick Bob's tab/ }).click();

  await expect(bob.page.getByTestId('stopped-banner')).toHaveText(/An administrator closed this tab/, { timeout: 3_000 });
  await expect(bob.page.getByTestId('case-editor')).toHaveAttribute('data-status', 'stopped');
  await expect(bob.page.getByTestId('case-editor').getByRole('button', { name: /Edit|Save/ })).toHaveCount(0);
  await expect(bob.page.getByTestId('case-editor').getByRole('textbox')).toHaveCount(0);
  await expect(card(bob.page, first!.id).getByTestId('field-text')).toHaveText(first!.content);
  await expect(row).toHaveCount(0);
  await shot(bob.page, artifactName(server, '5-bob-kicked'));

  // his lock went with the tab
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const status = await api.call<{ state: string }>('GET', `/locks/status?lockableType=Card&lockableParam=${first!.id}`);
  expect(status.state).toBe('unlocked');

  await alice.context.close();
  await bob.context.close();
});

test('6. A reader sees everything live and no edit control', async ({ browser, server }) => {
  const admin = await Api.login(server.apiUrl, DEMO.alice);
  const reader = { email: `reader-${Date.now()}@example.com`, name: 'Rita Reader', password: 'reader-password' };
  await admin.call('POST', '/users', { user: reader });
  await admin.call('POST', `/cases/${DEMO_CASE}/memberships`, { membership: { email: reader.email, role: 'reader' } });

  const rita = await signIn(browser, server, reader);
  const alice = await signIn(browser, server, DEMO.alice);
  await openCase(rita.page, server, DEMO_CASE);
  await openCase(alice.page, server, DEMO_CASE);
  const editor = rita.page.getByTestId('case-editor');
  await expect(editor.getByTestId('role')).toHaveText('reader');
  await expect(editor.getByRole('textbox')).toHaveCount(0);
  await expect(editor.getByRole('button')).toHaveCount(0);
  await expect(rita.page.getByTestId('avatar-stack').locator('[data-name="Alice"]')).toHaveCount(1);

  const second = alice.page.getByRole('textbox', { name: 'Card 2', exact: true });
  const id = Number((await second.locator('xpath=ancestor::*[@data-lock-state][1]').getAttribute('data-testid'))!.split('-').pop());
  await second.click();
  await expect(card(rita.page, id).getByTestId('lock-badge')).toHaveText(/Alice is editing/, WITHIN_1S);
  const text = 'Its last keeper must decide what to do next — live for readers too.';
  await second.fill(text);
  await card(alice.page, id).getByRole('button', { name: 'Save' }).click();
  await expect(card(rita.page, id).getByTestId('field-text')).toHaveText(text, WITHIN_1S);
  await expect(card(rita.page, id).getByTestId('lock-badge')).toHaveCount(0);
  await expect(editor.getByRole('button')).toHaveCount(0);
  await shot(rita.page, artifactName(server, '6-reader'));

  await alice.context.close();

  // signing out ends the token and returns to the sign-in screen
  await rita.page.getByRole('button', { name: 'Sign out' }).click();
  await expect(rita.page.getByRole('heading', { name: 'Sign in to baton' })).toBeVisible();
  await rita.page.reload();
  await expect(rita.page.getByRole('heading', { name: 'Sign in to baton' })).toBeVisible();
  await rita.context.close();
});

test('Keyboard only: Tab to Edit, type, Escape releases; leaving the case releases; notices are announced', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const [first, second] = scene.cards;
  const carol = await signIn(browser, server, DEMO.carol);
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(carol.page, server, scene.slug);
  await openCase(bob.page, server, scene.slug);

  // the Edit button of card 1 is reachable with Tab, and Enter takes the lock
  const edit = card(carol.page, first!.id).getByRole('button', { name: 'Edit Card 1' });
  await cardInput(carol.page, first!.id).focus();
  await carol.page.keyboard.press('Shift+Tab');
  await expect(edit).toBeFocused();
  await carol.page.keyboard.press('Enter');
  await expect(cardInput(carol.page, first!.id)).toBeFocused();
  await expect(cardInput(carol.page, first!.id)).toBeEditable();
  await carol.page.keyboard.type(' More.');
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  const live = bob.page.locator('[aria-live]').filter({ hasText: 'Carol is editing Card 1' });
  await expect(live).toHaveCount(1);
  // a visible focus ring
  const outline = await cardInput(carol.page, first!.id).evaluate((el) => getComputedStyle(el).outlineStyle);
  expect(outline).not.toBe('none');

  // Escape discards and releases, asking first since the draft changed
  carol.page.once('dialog', (dialog) => void dialog.accept());
  await carol.page.keyboard.press('Escape');
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);
  await expect(cardInput(bob.page, first!.id)).toHaveValue(first!.content);

  // going to another screen releases the lock at once
  await cardInput(carol.page, second!.id).click();
  await expect(card(bob.page, second!.id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  await carol.page.getByRole('link', { name: 'My cases' }).click();
  await expect(carol.page.getByTestId('case-list')).toContainText(scene.title);
  await expect(card(bob.page, second!.id).getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);

  await carol.context.close();
  await bob.context.close();
});

test('Page titles and edgenotes take their locks too; Enter saves a title; leaving the form keeps the draft and the lock', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  await openCase(bob.page, server, scene.slug);
  await openCase(carol.page, server, scene.slug);
  const bobTitle = bob.page.getByRole('textbox', { name: 'The harbour title' });
  const carolTitleField = carol.page.locator('[data-testid^="field-Page-"]').first();

  await bobTitle.click();
  await bobTitle.fill('The harbour at dawn');
  await expect(carolTitleField.getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await expect(carolTitleField.getByTestId('field-input')).not.toBeEditable();
  await bobTitle.press('Enter');
  await expect(carolTitleField.getByTestId('field-input')).toHaveValue('The harbour at dawn', WITHIN_1S);
  await expect(carolTitleField.getByTestId('lock-badge')).toHaveCount(0);

  const bobCaption = bob.page.getByRole('textbox', { name: 'Harbour chart caption' });
  const carolNoteField = carol.page.locator('[data-testid^="field-Edgenote-"]').first();
  // a record of several fields is taken with its Edit, not a click into one of them
  await bobCaption.click();
  await expect(bobCaption).not.toBeEditable();
  await bob.page.getByRole('button', { name: 'Edit Harbour chart' }).click();
  await bobCaption.fill('Harbour chart, 1890');
  await expect(carolNoteField.getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  // leaving the form saves nothing and keeps the draft and the lock
  await bob.page.getByRole('link', { name: 'baton' }).focus();
  await bob.page.waitForTimeout(300);
  await expect(carolNoteField.getByTestId('lock-badge')).toHaveText(/Bob is editing/);
  await expect(carolNoteField.getByTestId('field-input').first()).toHaveValue('Harbour chart');
  await expect(bobCaption).toHaveValue('Harbour chart, 1890');
  await bob.page.getByRole('button', { name: 'Save Harbour chart' }).click();
  await expect(carolNoteField.getByTestId('field-input').first()).toHaveValue('Harbour chart, 1890', WITHIN_1S);
  await expect(carolNoteField.getByTestId('lock-badge')).toHaveCount(0);
  await expect(carolNoteField).toHaveAttribute('data-lock-state', 'unlocked');

  await bob.context.close();
  await carol.context.close();
});

test('412 stale_version: the current text is shown beside mine and I choose', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  await cardInput(bob.page, first!.id).click();
  await cardInput(bob.page, first!.id).fill('Bob’s careful rewrite');

  // meanwhile a script of Bob's (no tab, so not stopped by his tab's lock) changes the card
  const script = await Api.login(server.apiUrl, DEMO.bob);
  await script.call('PATCH', `/cards/${first!.id}`, { card: { content: 'Changed by a script' } });

  await card(bob.page, first!.id).getByRole('button', { name: 'Save' }).click();
  const choice = card(bob.page, first!.id).getByTestId('stale-choice');
  await expect(choice.getByTestId('stale-current')).toHaveText('Changed by a script');
  await expect(choice.getByTestId('stale-mine')).toHaveText('Bob’s careful rewrite');
  await expect(card(bob.page, first!.id).getByTestId('field-notice')).toContainText('changed by someone else');
  await shot(bob.page, artifactName(server, '8-stale-version'));

  await choice.getByRole('button', { name: 'Keep my text' }).click();
  await expect(choice).toHaveCount(0);
  await expect(card(bob.page, first!.id)).toHaveAttribute('data-lock-state', 'unlocked');
  const stored = await script.call<{ content: string; version: number }>('GET', `/cards/${first!.id}`);
  expect(stored.content).toBe('Bob’s careful rewrite');
  expect(stored.version).toBe(3);

  await bob.context.close();
});

test('"Edit again with my text": once the taker is done, the former holder locks the card again and saves the kept text', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const carol = await signIn(browser, server, DEMO.carol);
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(carol.page, server, scene.slug);
  await openCase(bob.page, server, scene.slug);

  const kept = 'Carol’s words, kept through a takeover';
  await cardInput(carol.page, first!.id).click();
  await cardInput(carol.page, first!.id).fill(kept);
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  await bob.page.getByRole('button', { name: 'Edit anyway (Card 1)' }).click();
  await expect(card(carol.page, first!.id).getByTestId('takeover-banner')).toHaveText(/Bob took over this card/, WITHIN_1S);
  // while Bob holds it, Carol cannot take it back with her text
  await expect(card(carol.page, first!.id).getByRole('button', { name: 'Edit again with my text' })).toHaveCount(0);
  await card(bob.page, first!.id).getByRole('button', { name: 'Cancel' }).click();

  await card(carol.page, first!.id).getByRole('button', { name: 'Edit again with my text' }).click();
  await expect(card(carol.page, first!.id)).toHaveAttribute('data-lock-state', 'owned');
  await expect(cardInput(carol.page, first!.id)).toBeEditable();
  await expect(cardInput(carol.page, first!.id)).toHaveValue(kept);
  await expect(card(carol.page, first!.id).getByTestId('draft-panel')).toHaveCount(0);
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  await card(carol.page, first!.id).getByRole('button', { name: 'Save' }).click();
  await expect(card(carol.page, first!.id)).toHaveAttribute('data-lock-state', 'unlocked');
  await expect(cardInput(bob.page, first!.id)).toHaveValue(kept, WITHIN_1S);

  await carol.context.close();
  await bob.context.close();
});

test('Managers see the audit trail of a case; editors do not', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first] = scene.cards;
  const carol = await signIn(browser, server, DEMO.carol);
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(carol.page, server, scene.slug);
  await openCase(bob.page, server, scene.slug);
  await expect(bob.page.getByRole('link', { name: 'Audit trail' })).toHaveCount(0);

  await cardInput(carol.page, first!.id).click();
  await expect(card(bob.page, first!.id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  await bob.page.getByRole('button', { name: 'Edit anyway (Card 1)' }).click();
  await expect(card(carol.page, first!.id).getByTestId('takeover-banner')).toHaveText(/Bob took over this card/, WITHIN_1S);
  await card(bob.page, first!.id).getByRole('button', { name: 'Cancel' }).click();

  const alice = await signIn(browser, server, DEMO.alice);
  await openCase(alice.page, server, scene.slug);
  await alice.page.getByRole('link', { name: 'Audit trail' }).click();
  const rows = alice.page.getByTestId('audit-trail').locator('tbody tr');
  await expect(rows.filter({ hasText: 'overrode' })).toContainText(['Carol']);
  await expect(rows.filter({ hasText: 'overrode' })).toContainText('Bob');
  await expect(rows.filter({ hasText: 'locked' })).toHaveCount(2);
  await expect(rows.filter({ hasText: 'released' })).toHaveCount(1);
  await shot(alice.page, artifactName(server, '9-audit-trail'));

  await alice.context.close();
  await carol.context.close();
  await bob.context.close();
});

test('index.html is ready for a strict Content-Security-Policy: no inline script, style or handler', async ({ browser, server }) => {
  const response = await fetch(`${server.appUrl}/`, { headers: { Accept: 'text/html' } });
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await response.text();
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
  expect(html).not.toMatch(/<style[\s>]/i);
  expect(html).not.toMatch(/\son[a-z]+=/i);
  expect(html).not.toMatch(/\sstyle=/i);

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.appUrl}/`);
  await expect(page.getByRole('heading', { name: 'Sign in to baton' })).toBeVisible();
  expect(await page.locator('script:not([src]), style').count()).toBe(0);
  await context.close();
});
