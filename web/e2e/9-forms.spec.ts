/**
 * 14. A record is edited as one form, and a new one is made through a form:
 * Bob edits an edgenote (three fields) with one "Edit" and one "Save" —
 * one PATCH with the fields he changed — while Carol sees one badge for the
 * whole record; Cancel releases. "Add edgenote" opens a form with the
 * required fields marked; cancelled, it leaves nothing on the server or in
 * Carol's page; saved, it is there for both. A blank page title is refused
 * with baton's 422 at the title, in the create form and in the edit form,
 * and the draft stays. Keyboard only: Tab to Edit, type in two fields, save
 * with Ctrl+S, with a visible focus all the way.
 */
import type { Page, Request } from '@playwright/test';
import { Api, DEMO, artifactName, expect, freshCase, openCase, publish, shot, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };

interface CaseJson {
  pages: { id: number; title: string }[];
  edgenotes: { id: number; slug: string; caption: string; content: string }[];
}

/** The PATCH requests a tab sends, with their bodies. */
function patches(page: Page): { url: string; body: unknown }[] {
  const sent: { url: string; body: unknown }[] = [];
  page.on('request', (request: Request) => {
    if (request.method() === 'PATCH') sent.push({ url: request.url(), body: request.postDataJSON() });
  });
  return sent;
}

const focusRing = (page: Page) => page.evaluate(() => (document.activeElement ? getComputedStyle(document.activeElement).outlineStyle : 'none'));

test('14. One form per record: one Edit, one badge, one PATCH with the changed fields; Cancel releases', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const note = (await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]!;
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  await openCase(bob.page, server, scene.slug);
  await openCase(carol.page, server, scene.slug);
  const sent = patches(bob.page);

  const bobNote = bob.page.getByTestId(`field-Edgenote-${note.id}`);
  const carolNote = carol.page.getByTestId(`field-Edgenote-${note.id}`);
  // headed by its label; one Edit for the whole record, not one per field
  await expect(bobNote.getByTestId('record-title')).toHaveText('Harbour chart');
  await expect(bobNote.getByRole('button', { name: /^Edit/ })).toHaveCount(1);
  await bobNote.getByRole('button', { name: 'Edit Harbour chart' }).click();
  await expect(bobNote).toHaveAttribute('data-editing', 'true');
  // every field is open at once
  for (const field of ['caption', 'slug', 'content']) {
    await expect(bobNote.getByTestId(`field-Edgenote-${note.id}-${field}`).getByTestId('field-input')).toBeEditable();
  }
  await expect(bobNote.getByRole('textbox', { name: 'Harbour chart caption' })).toBeFocused();
  // Carol: one badge for the record, and no field of it takes input
  await expect(carolNote.getByTestId('lock-badge')).toHaveCount(1, WITHIN_1S);
  await expect(carolNote.getByTestId('lock-badge')).toHaveText(/Bob is editing/);
  await expect(carolNote.getByRole('button', { name: 'Edit anyway (Harbour chart)' })).toHaveCount(1);
  await expect(carolNote.getByRole('button', { name: /Notify me/ })).toHaveCount(1);
  for (const field of ['caption', 'slug', 'content']) {
    await expect(carolNote.getByTestId(`field-Edgenote-${note.id}-${field}`).getByTestId('field-input')).not.toBeEditable();
  }

  await bobNote.getByRole('textbox', { name: 'Harbour chart caption' }).fill('Harbour chart, 1890');
  await bobNote.getByRole('textbox', { name: 'Harbour chart content' }).fill('https://example.com/chart-1890.png');
  await shot(bob.page, artifactName(server, '14-bob-edits-one-form'));
  await bobNote.getByRole('button', { name: 'Save Harbour chart' }).click();
  await expect(carolNote.getByTestId(`field-Edgenote-${note.id}-caption`).getByTestId('field-input')).toHaveValue('Harbour chart, 1890', WITHIN_1S);
  await expect(carolNote.getByTestId(`field-Edgenote-${note.id}-content`).getByTestId('field-input')).toHaveValue('https://example.com/chart-1890.png');
  await expect(carolNote.getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);
  // one PATCH, with the two fields changed and nothing else
  expect(sent).toEqual([
    { url: `${server.appUrl}/edgenotes/${note.id}`, body: { edgenote: { caption: 'Harbour chart, 1890', content: 'https://example.com/chart-1890.png' } } },
  ]);
  // the heading follows the label
  await expect(carolNote.getByTestId('record-title')).toHaveText('Harbour chart, 1890');

  // Cancel drops the draft and releases
  await bobNote.getByRole('button', { name: 'Edit Harbour chart, 1890' }).click();
  await expect(carolNote.getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await bobNote.getByRole('textbox', { name: 'Harbour chart, 1890 caption' }).fill('Never saved');
  await bobNote.getByRole('button', { name: 'Cancel editing Harbour chart, 1890' }).click();
  await expect(carolNote.getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);
  await expect(bobNote.getByRole('textbox', { name: 'Harbour chart, 1890 caption' })).toHaveValue('Harbour chart, 1890');
  expect(sent).toHaveLength(1);
  expect((await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]).toMatchObject({ caption: 'Harbour chart, 1890', content: 'https://example.com/chart-1890.png' });

  // Edit anyway: Carol takes the record over, and Bob sees one banner for it
  await bobNote.getByRole('button', { name: 'Edit Harbour chart, 1890' }).click();
  await bobNote.getByRole('textbox', { name: 'Harbour chart, 1890 slug' }).fill('chart-1890');
  await carolNote.getByRole('button', { name: 'Edit anyway (Harbour chart, 1890)' }).click();
  await expect(bobNote.getByTestId('takeover-banner')).toHaveCount(1, WITHIN_1S);
  await expect(bobNote.getByTestId('takeover-banner')).toHaveText(/Carol took over this edgenote/);
  await expect(bobNote.getByTestId('draft-text')).toHaveValue('Slug: chart-1890');
  await carolNote.getByRole('button', { name: 'Cancel editing Harbour chart, 1890' }).click();
  await bobNote.getByRole('button', { name: 'Discard my text' }).click();
  await expect(bobNote.getByTestId('takeover-banner')).toHaveCount(0);

  await bob.context.close();
  await carol.context.close();
});

test('15. Add opens a form: cancelled it leaves nothing anywhere; saved it is there for everyone; a 422 shows at its field', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const before = await api.call<CaseJson>('GET', `/cases/${scene.slug}`);
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  await openCase(bob.page, server, scene.slug);
  await openCase(carol.page, server, scene.slug);
  const posts: string[] = [];
  bob.page.on('request', (r) => {
    if (r.method() === 'POST' && !r.url().includes('/locks')) posts.push(r.url());
  });

  // the form: the type's fields, required ones marked, defaults filled in, nothing sent yet
  await bob.page.getByRole('button', { name: 'Add edgenote' }).click();
  const form = bob.page.getByTestId('create-Edgenote');
  await expect(form.getByRole('heading', { name: 'New edgenote' })).toBeVisible();
  await expect(form.getByRole('textbox', { name: /Caption.*required/ })).toBeFocused();
  await expect(form.getByRole('textbox', { name: /Slug.*required/ })).toHaveValue('');
  await expect(form.getByRole('textbox', { name: /^Content/ })).toHaveValue('');
  await expect(form.getByTestId('create-field-content')).not.toContainText('*');
  await form.getByRole('textbox', { name: /Caption/ }).fill('Tide table');
  await shot(bob.page, artifactName(server, '15-create-form'));
  if (server.backend === 'sqlite') publish(await shot(bob.page, artifactName(server, '15-create-form')), 'create-form.png');
  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(form).toHaveCount(0);
  expect(posts).toEqual([]);
  await expect(carol.page.locator('[data-record-type="Edgenote"]')).toHaveCount(before.edgenotes.length);
  expect((await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes).toHaveLength(before.edgenotes.length);

  // a bad slug: baton's 422 at the slug, the draft kept; fixed, it saves
  await bob.page.getByRole('button', { name: 'Add edgenote' }).click();
  await form.getByRole('textbox', { name: /Caption/ }).fill('Tide table');
  await form.getByRole('textbox', { name: /Slug/ }).fill('Tide Table!');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByTestId('create-field-slug').getByTestId('field-error')).not.toBeEmpty();
  await expect(form.getByRole('textbox', { name: /Slug/ })).toHaveAttribute('aria-invalid', 'true');
  await expect(form.getByRole('textbox', { name: /Caption/ })).toHaveValue('Tide table');
  await expect(form.getByTestId('add-error')).toBeVisible();
  await expect(carol.page.locator('[data-record-type="Edgenote"]')).toHaveCount(before.edgenotes.length);
  await form.getByRole('textbox', { name: /Slug/ }).fill('tides');
  await expect(form.getByTestId('field-error')).toHaveCount(0);
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form).toHaveCount(0);
  await expect(carol.page.locator('[data-record-type="Edgenote"]')).toHaveCount(before.edgenotes.length + 1, WITHIN_1S);
  await expect(carol.page.getByRole('heading', { name: 'Tide table' })).toBeVisible();

  // a page with a blank title: 422 at the title, in the create form …
  await bob.page.getByRole('button', { name: 'Add page' }).click();
  const pageForm = bob.page.getByTestId('create-Page');
  await pageForm.getByRole('button', { name: 'Save' }).click();
  await expect(pageForm.getByTestId('create-field-title').getByTestId('field-error')).not.toBeEmpty();
  await expect(pageForm.getByRole('textbox', { name: /Title/ })).toBeFocused();
  await pageForm.getByRole('button', { name: 'Cancel' }).click();
  expect((await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).pages).toHaveLength(before.pages.length);

  // … and in the edit form, where the draft stays and the lock is kept
  const pageId = before.pages[0]!.id;
  const bobPage = bob.page.getByTestId(`field-Page-${pageId}`);
  await bobPage.getByRole('button', { name: 'Edit The harbour' }).click();
  await bobPage.getByRole('textbox', { name: 'The harbour title' }).fill('   ');
  await bobPage.getByRole('button', { name: 'Save The harbour' }).click();
  await expect(bobPage.getByTestId(`field-Page-${pageId}-title`).getByTestId('field-error')).not.toBeEmpty();
  await expect(bobPage.getByRole('textbox', { name: 'The harbour title' })).toHaveValue('   ');
  await expect(carol.page.getByTestId(`field-Page-${pageId}`).getByTestId('lock-badge')).toHaveText(/Bob is editing/);
  await bobPage.getByRole('button', { name: 'Cancel editing The harbour' }).click();
  await expect(carol.page.getByTestId(`field-Page-${pageId}`).getByTestId('lock-badge')).toHaveCount(0, WITHIN_1S);

  await bob.context.close();
  await carol.context.close();
});

test('16. Keyboard only: Tab to Edit, type in two fields, Ctrl+S saves; a visible focus throughout', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const note = (await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]!;
  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  const bobNote = bob.page.getByTestId(`field-Edgenote-${note.id}`);
  const edit = bobNote.getByRole('button', { name: 'Edit Harbour chart' });

  // from the page's top, Tab reaches the record's Edit
  await bob.page.getByRole('link', { name: 'baton' }).focus();
  for (let i = 0; i < 60; i++) {
    await bob.page.keyboard.press('Tab');
    if (await edit.evaluate((el) => el === document.activeElement)) break;
    expect(await focusRing(bob.page)).not.toBe('none');
  }
  await expect(edit).toBeFocused();
  expect(await focusRing(bob.page)).not.toBe('none');
  await bob.page.keyboard.press('Enter');
  const caption = bobNote.getByRole('textbox', { name: 'Harbour chart caption' });
  await expect(caption).toBeFocused();
  await bob.page.keyboard.press('End');
  await bob.page.keyboard.type(' (1890)');
  await bob.page.keyboard.press('Tab');
  await expect(bobNote.getByRole('textbox', { name: 'Harbour chart slug' })).toBeFocused();
  expect(await focusRing(bob.page)).not.toBe('none');
  await bob.page.keyboard.press('Tab');
  await expect(bobNote.getByRole('textbox', { name: 'Harbour chart content' })).toBeFocused();
  await bob.page.keyboard.press('ControlOrMeta+A');
  await bob.page.keyboard.type('https://example.com/1890.png');
  await bob.page.keyboard.press('Control+s');
  await expect(bobNote).not.toHaveAttribute('data-editing', 'true');
  await expect.poll(async () => (await api.call<CaseJson>('GET', `/cases/${scene.slug}`)).edgenotes[0]).toMatchObject({
    caption: 'Harbour chart (1890)',
    content: 'https://example.com/1890.png',
  });

  // Add, from the keyboard: Enter opens the form, Escape closes it and gives the focus back
  const add = bob.page.getByRole('button', { name: 'Add edgenote' });
  await add.focus();
  await bob.page.keyboard.press('Enter');
  await expect(bob.page.getByTestId('create-Edgenote').getByRole('textbox', { name: /Caption/ })).toBeFocused();
  await bob.page.keyboard.press('Escape');
  await expect(bob.page.getByTestId('create-Edgenote')).toHaveCount(0);
  await expect(add).toBeFocused();

  await bob.context.close();
});
