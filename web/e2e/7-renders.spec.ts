/**
 * 13. One frame re-renders what it changed. The app counts each record
 * component's renders when the page asks (`window.__batonRenders`, see
 * src/renderCount.ts): Alice's save of one card re-renders that card's
 * component in Bob's tab and none of its siblings, and Carol opening the
 * case (a presence frame) re-renders no record at all.
 */
import { Api, DEMO, card, expect, freshCase, openCase, signIn, test } from './support';

type Counts = Record<string, number>;

test('13. One update to one record re-renders that record, not its siblings', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const alice = await Api.login(server.apiUrl, DEMO.alice);
  const detail = await alice.call<{ pages: { id: number }[] }>('GET', `/cases/${scene.slug}`);
  const pageId = detail.pages[0]!.id;
  const ids = scene.cards.map((c) => c.id);
  for (const content of ['The third card.', 'The fourth card.', 'The fifth card.']) {
    ids.push((await alice.call<{ id: number }>('POST', `/pages/${pageId}/cards`, { card: { content } })).id);
  }

  const bob = await signIn(browser, server, DEMO.bob);
  await openCase(bob.page, server, scene.slug);
  for (const id of ids) await expect(card(bob.page, id)).toBeVisible();
  const start = (): Promise<void> =>
    bob.page.evaluate(() => {
      (window as { __batonRenders?: Counts }).__batonRenders = {};
    });
  const counts = (): Promise<Counts> => bob.page.evaluate(() => ({ ...((window as { __batonRenders?: Counts }).__batonRenders ?? {}) }));
  const settle = () => bob.page.waitForTimeout(300);

  // one update to one card
  await start();
  const [target, ...siblings] = ids;
  const text = 'Only this card changed.';
  await alice.call('PATCH', `/cards/${target}`, { card: { content: text } });
  await expect(card(bob.page, target!).getByTestId('field-input')).toHaveValue(text, { timeout: 2_000 });
  await settle();
  const afterUpdate = await counts();
  console.log(`renders after one card's update: ${JSON.stringify(afterUpdate)}`);
  expect(afterUpdate[`Card/${target}`]).toBeGreaterThanOrEqual(1);
  for (const id of siblings) expect(afterUpdate[`Card/${id}`] ?? 0).toBe(0);
  expect(afterUpdate[`Page/${pageId}`] ?? 0).toBe(0);

  // a presence frame: Carol opens the case
  await start();
  const carol = await signIn(browser, server, DEMO.carol);
  await openCase(carol.page, server, scene.slug);
  await expect(bob.page.getByTestId('avatar-stack')).toContainText('Carol, 1 tab');
  await settle();
  const afterPresence = await counts();
  console.log(`renders after a presence frame: ${JSON.stringify(afterPresence)}`);
  expect(Object.values(afterPresence).reduce((a, b) => a + b, 0)).toBe(0);

  await carol.context.close();
  await bob.context.close();
});
