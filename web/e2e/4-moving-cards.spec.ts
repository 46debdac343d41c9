/**
 * 10. Moving cards, with three people in three browser contexts: Bob drags a
 * card to the other page while Carol watches (she sees Bob's lock during the
 * drag and the card under its new page at once, without a reload); Carol
 * moves a card with the keyboard; Alice locks a page for restructuring, and
 * Bob's move onto it is refused with a clear message while the card stays.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { Api, DEMO, artifactName, card, expect, freshCase, openCase, shot, sideBySide, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };
const README_IMAGE = resolve(import.meta.dirname, '..', '..', 'docs', 'images', 'moving-cards.png');

/** The ids of the cards under a page, in the order the tab shows them. */
async function cardsOf(page: Page, pageId: number): Promise<number[]> {
  const ids = await page.getByTestId(`page-${pageId}`).locator('[data-record-id]').evaluateAll((items) => items.map((i) => Number((i as HTMLElement).dataset.recordId)));
  return ids;
}

/** Starts a drag of a card by its handle and holds it over `target`, near its bottom or its top (the mouse stays down). */
async function dragOver(page: Page, cardId: number, target: ReturnType<Page['getByTestId']>, where: 'bottom' | 'top' = 'bottom'): Promise<void> {
  const handle = page.getByTestId(`card-${cardId}`).getByTestId('drag-handle');
  await handle.hover();
  await page.mouse.down();
  const box = await target.boundingBox();
  if (!box) throw new Error('the drop target is not visible');
  await page.mouse.move(box.x + box.width / 2, where === 'bottom' ? box.y + box.height - 6 : box.y + 6, { steps: 8 });
}

test('10. Bob drags a card to the other page while Carol watches; a page locked for restructuring refuses a move in', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const alice = await Api.login(server.apiUrl, DEMO.alice);
  await alice.call('PATCH', `/cases/${scene.slug}`, { case: { title: 'The harbour master’s log' } });
  const first = (await alice.call<{ pageId: number }>('GET', `/cards/${scene.cards[0]!.id}`)).pageId;
  const second = await alice.call<{ id: number }>('POST', `/cases/${scene.slug}/pages`, { page: { title: 'The lighthouse' } });
  const third = await alice.call<{ id: number }>('POST', `/pages/${second.id}/cards`, { card: { content: 'The lamp is lit at dusk.' } });
  const [one, two] = scene.cards.map((c) => c.id) as [number, number];

  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  const aliceWindow = await signIn(browser, server, DEMO.alice);
  for (const who of [bob, carol, aliceWindow]) {
    // both pages in view: a drag does not scroll the window
    await who.page.setViewportSize({ width: 900, height: 1100 });
    await openCase(who.page, server, scene.slug);
  }
  expect(await cardsOf(carol.page, first)).toEqual([one, two]);
  expect(await cardsOf(carol.page, second.id)).toEqual([third.id]);

  // Bob picks card 1 up and holds it over the other page: his drag holds the card's lock, Carol sees it
  await dragOver(bob.page, one, bob.page.getByTestId(`page-${second.id}`));
  await expect(card(carol.page, one).getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await expect(card(carol.page, one)).toHaveAttribute('data-lock-state', 'locked');
  await expect(card(bob.page, one).getByTestId('lock-badge')).toHaveText(/You are moving this card/);
  const bobShot = await shot(bob.page, artifactName(server, '10-bob-drags'));
  const carolShot = await shot(carol.page, artifactName(server, '10-carol-watches'));
  await bob.page.mouse.up();

  // dropped at the end of the other page: Carol sees it there at once, and the lock is gone
  await expect.poll(() => cardsOf(carol.page, second.id), WITHIN_1S).toEqual([third.id, one]);
  expect(await cardsOf(carol.page, first)).toEqual([two]);
  await expect(card(carol.page, one)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  await expect.poll(() => cardsOf(bob.page, second.id)).toEqual([third.id, one]);
  await expect.poll(() => cardsOf(aliceWindow.page, second.id), WITHIN_1S).toEqual([third.id, one]);
  const stored = await alice.call<{ pageId: number; version: number }>('GET', `/cards/${one}`);
  expect(stored.pageId).toBe(second.id);
  await sideBySide(
    browser,
    artifactName(server, '10-moving-cards-side-by-side'),
    { label: 'Bob drags card 1 to “The lighthouse”', path: bobShot },
    { label: 'Carol sees Bob’s lock on it while he drags', path: carolShot },
  );
  const after = await shot(carol.page, artifactName(server, '10-carol-sees-it-moved'));
  if (server.backend === 'sqlite') {
    const both = await sideBySide(
      browser,
      artifactName(server, '10-moving-cards'),
      { label: 'Bob drags card 1 to “The lighthouse”: Carol sees his lock on it', path: carolShot },
      { label: 'Dropped: Carol sees it under its new page at once', path: after },
    );
    mkdirSync(resolve(README_IMAGE, '..'), { recursive: true });
    copyFileSync(both, README_IMAGE);
  }

  // Carol moves the card (now Card 3: cards are numbered through the case) up with the keyboard: everyone sees the new order
  await carol.page.getByRole('button', { name: 'Move Card 3 up' }).focus();
  await carol.page.keyboard.press('Enter');
  await expect.poll(() => cardsOf(carol.page, second.id)).toEqual([one, third.id]);
  await expect.poll(() => cardsOf(bob.page, second.id), WITHIN_1S).toEqual([one, third.id]);
  await expect(carol.page.getByTestId('announcer')).toContainText('moved');

  // Alice locks the first page for restructuring: the page and its card show it to everyone
  await aliceWindow.page.getByRole('button', { name: 'Lock The harbour for restructuring' }).click();
  await expect(aliceWindow.page.getByTestId(`page-${first}`).getByTestId('restructure-banner')).toContainText('You are restructuring this page');
  await expect(bob.page.getByTestId(`page-${first}`).getByTestId('restructure-banner')).toHaveText(/Alice is restructuring this page/, WITHIN_1S);
  await expect(card(bob.page, two).getByTestId('lock-badge')).toHaveText(/Alice is restructuring this page/);
  await expect(card(carol.page, two).getByTestId('lock-badge')).toHaveText(/Alice is restructuring this page/, WITHIN_1S);
  await expect(card(bob.page, two).getByRole('button', { name: /anyway/ })).toHaveCount(0);
  // the card inside (now Card 1) cannot be moved by Bob
  await expect(bob.page.getByRole('combobox', { name: 'Page to move Card 1 to' })).toBeDisabled();

  // Bob drags his card (now Card 2) back onto the locked page: refused, with the server's reason, and the card stays
  await dragOver(bob.page, one, bob.page.getByTestId(`page-${first}`));
  await bob.page.mouse.up();
  const refusal = bob.page.getByTestId(`card-${one}`).getByTestId('move-notice');
  await expect(refusal).toContainText('Not moved: Alice is restructuring that page');
  await expect.poll(() => cardsOf(bob.page, second.id)).toEqual([one, third.id]);
  expect(await cardsOf(bob.page, first)).toEqual([two]);
  await expect(card(bob.page, one)).toHaveAttribute('data-lock-state', 'unlocked');
  await expect(card(carol.page, one)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  expect((await alice.call<{ pageId: number }>('GET', `/cards/${one}`)).pageId).toBe(second.id);
  await shot(bob.page, artifactName(server, '10-bob-refused'));

  // the same move from the keyboard is refused the same way
  const select = bob.page.getByRole('combobox', { name: 'Page to move Card 2 to' });
  await select.selectOption({ label: 'The harbour' });
  await bob.page.getByRole('button', { name: 'Move Card 2 to the chosen page' }).click();
  await expect(refusal).toContainText('Not moved: Alice is restructuring that page');
  expect(await cardsOf(bob.page, first)).toEqual([two]);

  // Bob's edit of a card inside is refused too, with the server's message
  await card(bob.page, two).getByTestId('field-input').click();
  await expect(card(bob.page, two).getByTestId('field-notice')).not.toBeEmpty();
  await expect(card(bob.page, two).getByTestId('field-input')).not.toBeEditable();

  // Alice is done: the page is free, and Bob's move goes through
  await aliceWindow.page.getByRole('button', { name: 'Done restructuring The harbour' }).click();
  await expect(bob.page.getByTestId(`page-${first}`).getByTestId('restructure-banner')).toHaveCount(0, WITHIN_1S);
  await select.selectOption({ label: 'The harbour' });
  await bob.page.getByRole('button', { name: 'Move Card 2 to the chosen page' }).click();
  await expect.poll(() => cardsOf(carol.page, first), WITHIN_1S).toEqual([two, one]);

  // within a page: dropped on the upper half of a card, it goes before it
  await dragOver(bob.page, one, bob.page.getByTestId(`card-${two}`), 'top');
  await bob.page.mouse.up();
  await expect.poll(() => cardsOf(carol.page, first), WITHIN_1S).toEqual([one, two]);
  await expect.poll(() => cardsOf(bob.page, first)).toEqual([one, two]);
  await expect(card(carol.page, one)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);

  for (const who of [bob, carol, aliceWindow]) await who.context.close();
});
