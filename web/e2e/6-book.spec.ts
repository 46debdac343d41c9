/**
 * 12. The same app on the book schema (examples/schemas/book.toml): a book
 * has divisions, divisions have book components with a title, a text, a
 * status (an enum), a due date and a source address. Alice locks the body
 * for restructuring: every component in it is read-only for Bob and Carol,
 * with who holds it; the front matter stays free. Bob's blank title is
 * refused with the server's 422 message at the title; he edits a
 * component's title and status in one form, and adds a component to the
 * back matter through the create form; Carol sees each at once.
 */
import { Api, DEMO, DEMO_CASE, artifactName, expect, openCase, publish, shot, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };

interface Book {
  divisions: { id: number; title: string; bookComponents: { id: number; title: string }[] }[];
}

test('12. Book: a deep lock on a division makes its components read-only for everyone else; a 422 shows at its field; adding a component', async ({
  browser,
  server,
}) => {
  const api = await Api.login(server.apiUrl, DEMO.alice);
  const book = await api.call<Book>('GET', `/cases/${DEMO_CASE}`);
  const [front, body, back] = book.divisions;
  const preface = front!.bookComponents[1]!;
  const inBody = body!.bookComponents.map((c) => c.id);

  const alice = await signIn(browser, server, DEMO.alice);
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  for (const who of [alice, bob, carol]) {
    await who.page.setViewportSize({ width: 900, height: 1400 });
    await openCase(who.page, server, DEMO_CASE);
  }

  // each field with the control its JSON Schema calls for
  const anemones = bob.page.getByTestId(`book-component-${inBody[1]}`);
  await expect(anemones.getByRole('heading', { name: 'Anemones, limpets and periwinkles' })).toBeVisible();
  await expect(anemones.getByRole('combobox', { name: 'Anemones, limpets and periwinkles status' })).toHaveValue('draft');
  await expect(anemones.getByTestId(`field-BookComponent-${inBody[1]}-dueOn`).getByTestId('field-input')).toHaveAttribute('type', 'date');
  await expect(anemones.getByTestId(`field-BookComponent-${inBody[1]}-dueOn`).getByTestId('field-input')).toHaveValue('2026-05-30');
  await expect(anemones.getByTestId('field-link')).toHaveAttribute('href', 'https://example.com/manuscripts/shore-life.pdf');
  await expect(anemones.getByRole('textbox', { name: 'Anemones, limpets and periwinkles content' })).toBeVisible();

  // Alice (a manager) locks the body with everything in it
  await alice.page.getByRole('button', { name: 'Lock Body for restructuring' }).click();
  await expect(alice.page.getByTestId(`division-${body!.id}`).getByTestId('restructure-banner')).toContainText(
    'You are restructuring this division: nobody else can edit, move or add its book components.',
  );
  for (const who of [bob, carol]) {
    await expect(who.page.getByTestId(`division-${body!.id}`).getByTestId('restructure-banner')).toHaveText(/Alice is restructuring this division/, WITHIN_1S);
    for (const id of inBody) {
      const title = who.page.getByTestId(`field-BookComponent-${id}`);
      await expect(title).toHaveAttribute('data-lock-state', 'locked');
      await expect(title.getByTestId('lock-badge')).toHaveText(/Alice is restructuring this division/);
      await expect(title.getByRole('button', { name: /anyway/ })).toHaveCount(0);
    }
    // the front matter is not inside it
    await expect(who.page.getByTestId(`field-BookComponent-${preface.id}`)).toHaveAttribute('data-lock-state', 'unlocked');
  }
  await bob.page.getByTestId(`division-${body!.id}`).scrollIntoViewIfNeeded();
  const bookShot = await shot(bob.page, artifactName(server, '12-bob-sees-the-body-restructured'));
  if (server.backend === 'sqlite') publish(bookShot, 'book.png');
  // clicking into a component of the body takes nothing; Enter asks for it, and is told why not
  const bobChapter = bob.page.getByRole('textbox', { name: 'Reading the tide table title' });
  await bobChapter.click();
  await expect(bobChapter).not.toBeEditable();
  await bobChapter.press('Enter');
  await expect(bobChapter).not.toBeEditable();
  await expect(bob.page.getByTestId(`field-BookComponent-${inBody[0]}`).getByTestId('field-notice')).toContainText('Alice');

  await alice.page.getByRole('button', { name: 'Done restructuring Body' }).click();
  await expect(bob.page.getByTestId(`field-BookComponent-${inBody[0]}`)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  await expect(bob.page.getByTestId(`division-${body!.id}`).getByTestId('restructure-banner')).toHaveCount(0);

  // a blank title breaks the field's schema: baton's 422 names the field, and its message shows there
  const prefaceTitle = bob.page.getByTestId(`field-BookComponent-${preface.id}`);
  const input = prefaceTitle.getByRole('textbox', { name: 'Preface title' });
  await prefaceTitle.getByRole('button', { name: 'Edit Preface' }).click();
  await input.fill('   ');
  await input.press('Enter');
  await expect(prefaceTitle.getByTestId('field-notice')).toHaveText(/Not saved: .*title can't be blank/);
  await expect(prefaceTitle.getByTestId(`field-BookComponent-${preface.id}-title`).getByTestId('field-error')).toHaveText(/title can't be blank/);
  await expect(input).toHaveAttribute('aria-invalid', 'true');
  await expect(carol.page.getByTestId(`field-BookComponent-${preface.id}`).getByTestId('lock-badge')).toHaveText(/Bob is editing/);
  await prefaceTitle.getByRole('button', { name: 'Cancel editing Preface' }).click();
  await expect(carol.page.getByTestId(`field-BookComponent-${preface.id}`)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);

  // one form: the title and the status under one lock, saved together
  await prefaceTitle.getByRole('button', { name: 'Edit Preface' }).click();
  await input.fill('Preface, revised');
  await prefaceTitle.getByRole('combobox', { name: 'Preface status' }).selectOption('done');
  const carolTitle = carol.page.getByTestId(`field-BookComponent-${preface.id}`);
  await expect(carolTitle).toHaveAttribute('data-lock-state', 'locked');
  await expect(carolTitle.getByTestId('lock-badge')).toHaveCount(1);
  await prefaceTitle.getByRole('button', { name: 'Save Preface' }).click();
  await expect(carolTitle.getByRole('textbox', { name: 'Preface, revised title' })).toHaveValue('Preface, revised', WITHIN_1S);
  await expect(carol.page.getByRole('combobox', { name: 'Preface, revised status' })).toHaveValue('done');
  await expect(carolTitle).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  expect(await api.call<{ title: string; status: string }>('GET', `/book_components/${preface.id}`)).toMatchObject({ title: 'Preface, revised', status: 'done' });

  // "Add book component" sits with its division and opens a form; saved, the component is there for Carol at once
  await bob.page.getByTestId(`division-${back!.id}`).getByRole('button', { name: 'Add book component' }).click();
  const form = bob.page.getByTestId('create-BookComponent');
  await expect(form.getByRole('combobox', { name: 'Status' })).toHaveValue('draft');
  await form.getByRole('textbox', { name: /Title.*required/ }).fill('Further reading');
  await form.getByRole('button', { name: 'Save' }).click();
  const carolBack = carol.page.getByTestId(`division-${back!.id}`);
  await expect(carolBack.locator('[data-record-type="BookComponent"]')).toHaveCount(back!.bookComponents.length + 1, WITHIN_1S);
  await expect(carolBack.getByRole('heading', { name: 'Further reading' })).toBeVisible();

  for (const who of [alice, bob, carol]) await who.context.close();
});
