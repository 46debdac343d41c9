/**
 * 17. Accessibility: axe-core (through @axe-core/playwright) finds no
 * violation of impact serious or critical on the sign-in page, the case
 * list, a case page, a record being edited, a create form, and the
 * taken-over and waiting states. Every violation found, of any impact, is
 * printed with its rule id and count, so a run shows what is left.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { DEMO, card, cardInput, expect, freshCase, openCase, signIn, test } from './support';

const WITHIN_1S = { timeout: 1_000 };
// the app's CSP allows no inline script: axe's script goes in with the CSP bypassed in these contexts
const AXE_CONTEXT = { bypassCSP: true };

/** Runs axe on the page; prints every violation (rule id, impact, count); returns the serious and critical ones. */
async function audit(page: Page, where: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const lines = violations.map((v) => `${v.id} (${v.impact ?? 'unknown'}): ${v.nodes.length}`);
  console.log(`axe ${where}: ${lines.length === 0 ? 'no violations' : lines.join(', ')}`);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}) ×${v.nodes.length}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`);
}

test('17. axe finds nothing serious or critical: sign-in, case list, case, editing, create form, taken over, waiting', async ({ browser, server }) => {
  const scene = await freshCase(server);
  const [first, second] = scene.cards;

  // the sign-in page, before anyone signs in
  const context = await browser.newContext(AXE_CONTEXT);
  const anonymous = await context.newPage();
  await anonymous.goto(`${server.appUrl}/`);
  await expect(anonymous.getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await audit(anonymous, 'sign-in page')).toEqual([]);
  await context.close();

  const bob = await signIn(browser, server, DEMO.bob, AXE_CONTEXT);
  const carol = await signIn(browser, server, DEMO.carol, AXE_CONTEXT);
  await expect(bob.page.getByTestId('case-list')).toContainText(scene.title);
  expect(await audit(bob.page, 'case list')).toEqual([]);

  await openCase(bob.page, server, scene.slug);
  await openCase(carol.page, server, scene.slug);
  expect(await audit(bob.page, 'case page')).toEqual([]);

  // a record being edited (Bob), and the same record held by someone else (Carol)
  await cardInput(bob.page, first!.id).click();
  await cardInput(bob.page, first!.id).fill('Bob is rewriting the first card.');
  await expect(card(carol.page, first!.id).getByTestId('lock-badge')).toHaveText(/Bob is editing/, WITHIN_1S);
  expect(await audit(bob.page, 'record being edited')).toEqual([]);

  // the waiting state: Carol waits for Bob's card
  await carol.page.getByRole('button', { name: `Notify me / wait for Card 1` }).click();
  await expect(card(carol.page, first!.id).getByTestId('line-place')).toHaveText('You are next');
  expect(await audit(carol.page, 'waiting')).toEqual([]);
  await card(carol.page, first!.id).getByRole('button', { name: 'Leave the line for Card 1' }).click();

  // taken over: Carol chooses "Edit anyway"; Bob's banner and kept draft
  await carol.page.getByRole('button', { name: 'Edit anyway (Card 1)' }).click();
  await expect(card(bob.page, first!.id).getByTestId('takeover-banner')).toHaveText(/Carol took over this card/, WITHIN_1S);
  expect(await audit(bob.page, 'taken over')).toEqual([]);
  await card(carol.page, first!.id).getByRole('button', { name: 'Cancel editing Card 1' }).click();
  await card(bob.page, first!.id).getByRole('button', { name: 'Discard my text' }).click();

  // a create form, with a 422 shown at its field
  await bob.page.getByRole('button', { name: 'Add edgenote' }).click();
  const form = bob.page.getByTestId('create-Edgenote');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByTestId('field-error').first()).toBeVisible();
  expect(await audit(bob.page, 'create form')).toEqual([]);
  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(card(bob.page, second!.id)).toBeVisible();

  await bob.context.close();
  await carol.context.close();
});
