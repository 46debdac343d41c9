/**
 * 8. The waiting line, with three people in three browser contexts: Bob
 * holds card 1, Carol waits, then Alice waits. Each gets the card in turn,
 * handed over by baton and told over the edits channel, without a click;
 * and a waiting tab that goes away (pagehide) or closes leaves the line for
 * everyone.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Api, DEMO, artifactName, card, cardInput, expect, freshCase, openCase, shot, sideBySide, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };
/** The disconnect grace (1.5 s) plus the reaper and the broadcast, with room for a loaded machine. */
const AFTER_GRACE = { timeout: 8_000 };
const README_IMAGE = resolve(import.meta.dirname, '..', '..', 'docs', 'images', 'waiting-line.png');

test('8. Bob holds a card, Carol and then Alice wait: it is handed to each in turn, and a closed tab leaves the line', async ({
  browser,
  server,
}) => {
  const scene = await freshCase(server);
  const id = scene.cards[0]!.id;
  // a title of its own, so that the README's screenshot is the same on every run
  await (await Api.login(server.apiUrl, DEMO.alice)).call('PATCH', `/cases/${scene.slug}`, { case: { title: 'The harbour master’s log' } });
  const bob = await signIn(browser, server, DEMO.bob);
  const carol = await signIn(browser, server, DEMO.carol);
  const alice = await signIn(browser, server, DEMO.alice);
  for (const who of [bob, carol, alice]) await openCase(who.page, server, scene.slug);

  const bobText = 'The harbour master’s log, as Bob tidied it.';
  await cardInput(bob.page, id).click();
  await cardInput(bob.page, id).fill(bobText);
  await expect(card(carol.page, id).getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  await expect(card(alice.page, id).getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);

  // Carol, then Alice, ask to be told when it is their turn
  await expect(card(carol.page, id)).toHaveAttribute('data-lock-state', 'locked');
  await expect(card(alice.page, id)).toHaveAttribute('data-lock-state', 'locked');
  await carol.page.getByRole('button', { name: 'Notify me / wait for Card 1' }).click();
  await expect(card(carol.page, id).getByTestId('line-place')).toHaveText('You are next');
  await expect(card(carol.page, id)).toHaveAttribute('data-lock-state', 'waiting');
  await expect(carol.page.getByTestId('announcer')).toContainText('You are next for Card 1');
  await alice.page.getByRole('button', { name: 'Notify me / wait for Card 1' }).click();
  await expect(card(alice.page, id).getByTestId('line-place')).toHaveText('2nd in line');
  await expect(cardInput(alice.page, id)).not.toBeEditable();

  // Bob sees who is waiting, with their avatars (their initials are the avatars' text), and keeps typing
  const waiting = card(bob.page, id).getByTestId('waiter');
  await expect(waiting).toHaveText([/^C?Carol is waiting$/, /^A?Alice is waiting$/], WITHIN_1S);
  await expect(waiting.first().locator('[data-name="Carol"]')).toHaveCount(1);
  await expect(cardInput(bob.page, id)).toBeEditable();
  await expect(cardInput(bob.page, id)).toHaveValue(bobText);

  const bobShot = await shot(bob.page, artifactName(server, '8-bob-sees-the-line'));
  const aliceShot = await shot(alice.page, artifactName(server, '8-alice-2nd-in-line'));
  const both = await sideBySide(
    browser,
    artifactName(server, '8-waiting-line-side-by-side'),
    { label: 'Bob is editing: Carol is waiting, then Alice', path: bobShot },
    { label: 'Alice asked to be told: she is 2nd in line', path: aliceShot },
  );
  if (server.backend === 'sqlite') {
    mkdirSync(resolve(README_IMAGE, '..'), { recursive: true });
    copyFileSync(both, README_IMAGE);
  }

  // Bob saves and stops: the card is Carol's, editable without a click, and she is told
  await card(bob.page, id).getByRole('button', { name: 'Save' }).click();
  await expect(cardInput(carol.page, id)).toBeEditable(WITHIN_1S);
  await expect(card(carol.page, id)).toHaveAttribute('data-lock-state', 'owned');
  await expect(cardInput(carol.page, id)).toHaveValue(bobText);
  await expect(cardInput(carol.page, id)).toBeFocused();
  await expect(carol.page.getByTestId('announcer')).toContainText("It's yours: Card 1");
  await expect(card(alice.page, id).getByTestId('line-place')).toHaveText('You are next', WITHIN_1S);
  await expect(alice.page.getByTestId('announcer')).toContainText('You are next for Card 1');
  await expect(card(alice.page, id).getByTestId('lock-badge')).toHaveText(/Carol is editing/);
  await expect(card(bob.page, id).getByTestId('lock-badge')).toHaveText(/Carol is editing/, WITHIN_1S);
  await expect(card(bob.page, id).getByTestId('waiter')).toHaveText([/^A?Alice is waiting$/]);
  await shot(carol.page, artifactName(server, '8-carol-its-yours'));

  // Carol types straight away, saves and leaves it: now it is Alice's
  const carolText = 'The harbour master’s log, with Carol’s dates.';
  await carol.page.keyboard.press('ControlOrMeta+a');
  await carol.page.keyboard.type(carolText);
  await card(carol.page, id).getByRole('button', { name: 'Save' }).click();
  await expect(cardInput(alice.page, id)).toBeEditable(WITHIN_1S);
  await expect(card(alice.page, id)).toHaveAttribute('data-lock-state', 'owned');
  await expect(cardInput(alice.page, id)).toHaveValue(carolText);
  await expect(alice.page.getByTestId('announcer')).toContainText("It's yours: Card 1");
  await expect(card(bob.page, id).getByTestId('lock-badge')).toHaveText(/Alice is editing/, WITHIN_1S);
  await expect(card(bob.page, id).getByTestId('waiter')).toHaveCount(0);

  // Carol waits again and goes elsewhere: on pagehide her tab sends DELETE /locks?session=mine, which leaves the line for everyone
  const waitAgain = async () => {
    await carol.page.getByRole('button', { name: 'Notify me / wait for Card 1' }).click();
    await expect(card(carol.page, id).getByTestId('line-place')).toHaveText('You are next');
    await expect(card(alice.page, id).getByTestId('waiter')).toHaveText([/^C?Carol is waiting$/], WITHIN_1S);
    await expect(card(bob.page, id).getByTestId('waiter')).toHaveText([/^C?Carol is waiting$/], WITHIN_1S);
  };
  // the app's own fetch, watched from here on: what the tab sends as it goes is kept in its sessionStorage
  await carol.context.addInitScript(() => {
    const send = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (init?.method === 'DELETE' && (input instanceof Request ? input.url : input.toString()).endsWith('/locks?session=mine')) sessionStorage.setItem('e2e.left', `keepalive=${init.keepalive}`);
      return send(input, init);
    };
  });
  await carol.page.reload();
  await expect(carol.page.getByTestId('case-editor')).toHaveAttribute('data-status', 'live');
  await waitAgain();
  await carol.page.goto(`${server.appUrl}/healthz`);
  expect(await carol.page.evaluate(() => sessionStorage.getItem('e2e.left'))).toBe('keepalive=true');
  await expect(card(alice.page, id).getByTestId('waiter')).toHaveCount(0);
  await expect(card(bob.page, id).getByTestId('waiter')).toHaveCount(0);

  // and once more, closing the tab this time: she is gone from the line on every screen
  await openCase(carol.page, server, scene.slug);
  await waitAgain();
  await carol.page.close({ runBeforeUnload: true });
  await expect(card(alice.page, id).getByTestId('waiter')).toHaveCount(0, AFTER_GRACE);
  await expect(card(bob.page, id).getByTestId('waiter')).toHaveCount(0, AFTER_GRACE);

  // nobody waits any more: when Alice is done, the card is free
  const aliceText = 'The harbour master’s log, checked by Alice.';
  await cardInput(alice.page, id).fill(aliceText);
  await card(alice.page, id).getByRole('button', { name: 'Save' }).click();
  await expect(card(bob.page, id)).toHaveAttribute('data-lock-state', 'unlocked', WITHIN_1S);
  const api = await Api.login(server.apiUrl, DEMO.bob);
  const stored = await api.call<{ content: string }>('GET', `/cards/${id}`);
  expect(stored.content).toBe(aliceText);

  for (const who of [bob, carol, alice]) await who.context.close();
});
