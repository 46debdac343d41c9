/**
 * 11. The same app on another schema: baton serving examples/schemas/kanban.toml
 * (a board has columns, columns have cards with a colour). Nothing in the app
 * names these types: it renders what `GET /schema` declares. Bob drags a
 * card to another column while Carol watches it go; Carol recolours a card
 * (an enum is a select) while Bob sees who is editing and, the type's lock
 * policy being `takeover = "manager"` and `wait = false`, is offered neither
 * "Edit anyway" nor a waiting line. Carol moves a column up; Bob deletes a
 * card; each sees the other's change at once.
 */
import type { Page } from '@playwright/test';
import { Api, DEMO, DEMO_CASE, artifactName, expect, openCase, publish, shot, sideBySide, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };

interface Board {
  columns: { id: number; title: string; cards: { id: number; content: string; color: string }[] }[];
}

/** The ids of the cards under a column, in the order the tab shows them. */
async function cardsOf(page: Page, columnId: number): Promise<number[]> {
  return page
    .getByTestId(`column-${columnId}`)
    .locator('[data-record-type="Card"]')
    .evaluateAll((items) => items.map((i) => Number((i as HTMLElement).dataset.recordId)));
}

test('11. Kanban: Bob drags a card to another column while Carol watches it move; a colour is a select; the type’s lock policy holds', async ({
  browser,
  server,
}) => {
  const alice = await Api.login(server.apiUrl, DEMO.alice);
  const board = await alice.call<Board>('GET', `/cases/${DEMO_CASE}`);
  const [todo, doing] = board.columns;
  const card = todo!.cards[0]!;
  const other = todo!.cards[1]!;
  const doingCards = doing!.cards.map((c) => c.id);

  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  for (const who of [bob, carol]) {
    await who.page.setViewportSize({ width: 900, height: 1300 });
    await openCase(who.page, server, DEMO_CASE);
  }
  // the schema's types, as sections and lists: columns with their cards
  await expect(carol.page.getByRole('textbox', { name: 'To do title' })).toHaveValue('To do');
  // a column is headed by its label
  await expect(carol.page.getByTestId(`column-${todo!.id}`).getByRole('heading', { name: 'To do' })).toBeVisible();
  await expect(carol.page.getByRole('combobox', { name: 'Card 1 color' })).toHaveValue(card.color);
  expect(await cardsOf(carol.page, doing!.id)).toEqual(doingCards);

  // Bob picks card 1 up and holds it over the second column: his drag holds the card's lock, Carol sees it
  const handle = bob.page.getByTestId(`card-${card.id}`).getByTestId('drag-handle');
  await handle.hover();
  await bob.page.mouse.down();
  // over the column's title: not onto one of its cards, so the card goes last
  const box = await bob.page.getByTestId(`field-Column-${doing!.id}`).boundingBox();
  if (!box) throw new Error('the column is not visible');
  await bob.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 8 });
  const carolCard = carol.page.getByTestId(`field-Card-${card.id}`);
  await expect(carolCard.getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await expect(carolCard).toHaveAttribute('data-lock-state', 'locked');
  await expect(bob.page.getByTestId(`field-Card-${card.id}`).getByTestId('lock-badge')).toHaveText(/You are moving this card/);
  const bobShot = await shot(bob.page, artifactName(server, '11-bob-drags'));
  const carolShot = await shot(carol.page, artifactName(server, '11-carol-watches'));
  await bob.page.mouse.up();

  // dropped on the column: last there, for Carol at once, and the lock is gone
  await expect.poll(() => cardsOf(carol.page, doing!.id), WITHIN_1S).toEqual([...doingCards, card.id]);
  expect(await cardsOf(carol.page, todo!.id)).not.toContain(card.id);
  await expect(carolCard).toHaveAttribute('data-lock-state', 'unlocked');
  const moved = await alice.call<{ columnId: number; position: number }>('GET', `/cards/${card.id}`);
  expect(moved.columnId).toBe(doing!.id);
  const both = await sideBySide(
    browser,
    artifactName(server, '11-kanban-side-by-side'),
    { label: 'Bob drags “Write the copy” to In progress', path: bobShot },
    { label: 'Carol sees that Bob holds the card, live', path: carolShot },
  );
  if (server.backend === 'sqlite') publish(both, 'kanban.png');

  // Carol recolours the next card: its form opens with one "Edit" (the colour a select)
  const carolColor = carol.page.getByTestId(`field-Card-${other.id}`);
  await carolColor.getByRole('button', { name: 'Edit Card 1' }).click();
  await expect(carolColor).toHaveAttribute('data-lock-state', 'owned');
  const bobColor = bob.page.getByTestId(`field-Card-${other.id}`);
  await expect(bobColor.getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  // cards: "Edit anyway" for managers only, and no waiting line
  await expect(bobColor.getByRole('button', { name: /anyway/ })).toHaveCount(0);
  await expect(bobColor.getByRole('button', { name: /Notify me/ })).toHaveCount(0);
  await carolColor.getByRole('combobox', { name: 'Card 1 color' }).selectOption('green');
  await carolColor.getByRole('button', { name: 'Save Card 1' }).click();
  await expect(bob.page.getByRole('combobox', { name: 'Card 1 color' })).toHaveValue('green', WITHIN_1S);
  await expect(bobColor).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  expect((await alice.call<{ color: string }>('GET', `/cards/${other.id}`)).color).toBe('green');

  // an ordered type under the case: Carol moves the second column up, Bob sees the new order
  await carol.page.getByRole('button', { name: 'Move In progress up' }).click();
  const titles = bob.page.locator('[data-testid^="field-Column-"][data-testid$="-title"] [data-testid="field-input"]');
  await expect(titles.nth(0)).toHaveValue('In progress', WITHIN_1S);
  await expect(titles.nth(1)).toHaveValue('To do');

  // "Delete" asks once; the card leaves every open board
  const last = board.columns[2]!.cards[0]!;
  await expect(carol.page.getByTestId(`card-${last.id}`)).toHaveCount(1);
  await bob.page.getByTestId(`card-${last.id}`).getByRole('button', { name: /^Delete Card \d+$/ }).click();
  await bob.page.getByTestId(`card-${last.id}`).getByRole('button', { name: /and everything in it/ }).click();
  await expect(carol.page.getByTestId(`card-${last.id}`)).toHaveCount(0, WITHIN_1S);

  await bob.context.close();
  await carol.context.close();
});
