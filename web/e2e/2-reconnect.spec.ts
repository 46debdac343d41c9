/**
 * 7. A lost connection shows "reconnecting…" and recovers. This scenario stops
 * and restarts a baton of its own (same SQLite file, port and secret), so it
 * never disturbs the shared servers; it runs in the sqlite project.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { batonBinary, servesApp, startBaton, startPreview, stop, type Running, type ServerInfo } from './global-setup';
import { Api, DEMO, DEMO_CASE, artifactName, card, expect, openCase, shot, signIn, test } from './support';

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

test('7. A lost connection shows "reconnecting…" and recovers', async ({ browser }) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-web-e2e-reconnect-'));
  const database = join(dir, 'baton.sqlite3');
  const options = { port: await freePort(), secret: randomBytes(24).toString('hex') };
  const batons: Running[] = [];
  const previews: Running[] = [];
  try {
    const apiUrl = await startBaton(batonBinary(), 'sqlite', database, dir, batons, options);
    const viaPreview = Boolean(process.env.BATON_E2E_PREVIEW);
    if (!viaPreview) expect(await servesApp(apiUrl)).toBe(true);
    const appUrl = viaPreview ? await startPreview(apiUrl, 'reconnect', previews) : apiUrl;
    const server: ServerInfo = { backend: 'sqlite', apiUrl, appUrl, servedBy: viaPreview ? 'vite-preview' : 'baton' };

    const bob = await signIn(browser, server, DEMO.bob);
    await openCase(bob.page, server, DEMO_CASE);
    const first = bob.page.getByRole('textbox', { name: 'Card 1', exact: true });
    const id = Number((await first.locator('xpath=ancestor::*[@data-lock-state][1]').getAttribute('data-testid'))!.split('-').pop());

    await stop(batons);
    await expect(bob.page.getByTestId('connection')).toHaveText(/reconnecting…/, { timeout: 5_000 });
    await expect(bob.page.getByTestId('case-editor')).toHaveAttribute('data-status', 'reconnecting');
    await shot(bob.page, artifactName(server, '7-reconnecting'));

    await startBaton(batonBinary(), 'sqlite', database, dir, batons, options);
    await expect(bob.page.getByTestId('case-editor')).toHaveAttribute('data-status', 'live', { timeout: 15_000 });
    await expect(bob.page.getByTestId('connection')).toHaveCount(0);

    // live again: Alice's edit shows up
    const alice = await Api.login(apiUrl, DEMO.alice);
    const text = 'Back online: the keeper radios the harbour.';
    await alice.call('PATCH', `/cards/${id}`, { card: { content: text } });
    await expect(card(bob.page, id).getByTestId('field-input')).toHaveValue(text, { timeout: 2_000 });

    await bob.context.close();
  } finally {
    await stop(previews);
    await stop(batons);
    rmSync(dir, { recursive: true, force: true });
  }
});
