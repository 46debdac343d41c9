/**
 * `getToken()` against a real baton: a tab whose token ends while it holds
 * a lock and has a draft carries on with a fresh token — its channel
 * reconnected with one before the end, its lock still its own, its draft
 * saved after baton refuses the old token — and a tab that starts with a
 * token baton refuses gets a fresh one on the first 401. Short tokens come
 * from `POST /auth/tokens` (a host's API key, `ttl: "1s"`).
 */
import { describe, expect, it, vi } from 'vitest';
import type { TokenRequest } from '../src/index.js';
import type { Card, Page } from '../../test/support.js';
import { cli, rest, servers, tabsDisposedAfterEach, unique } from '../../test/support.js';
import type { User } from '../src/types.js';

describe.each(servers())('getToken on $backend', (server) => {
  const tab = tabsDisposedAfterEach();

  /** A user a host signs in, with a case of one card; `mint(ttl)` makes them a token that lasts `ttl`. */
  async function scene() {
    const key = cli(server, ['key', 'add', '--name', unique('kit')]).trim();
    const slug = unique('short');
    const externalId = unique('ada');
    const mint = async (ttl: string) => {
      const { status, data } = await rest<{ token: string; user: User }>(server, key, 'POST', '/auth/tokens', {
        user: { externalId, name: 'Ada' },
        cases: [{ slug, role: 'editor' }],
        ttl,
      });
      if (status !== 201) throw new Error(`POST /auth/tokens: ${status} ${JSON.stringify(data)}`);
      return data.token;
    };
    await mint('1h');
    const page = (await rest<Page>(server, server.adminToken, 'POST', `/cases/${slug}/pages`, { page: { title: 'First page' } })).data;
    const card = (await rest<Card>(server, server.adminToken, 'POST', `/pages/${page.id}/cards`, { card: { content: 'card 0' } })).data;
    return { slug, card, mint };
  }
  const refused = async (token: string) => (await rest(server, token, 'GET', '/me')).status === 401;

  it('a token that ends while the tab holds a lock and a draft: renewed before its end, the draft saved after it', async () => {
    const { slug, card, mint } = await scene();
    const short = await mint('1s');
    const asked: TokenRequest['reason'][] = [];
    const client = tab(server, null, undefined, {
      token: short,
      getToken: async ({ reason, current }) => {
        asked.push(reason);
        return reason === 'reconnect' ? current : mint('1h');
      },
    });
    const { live } = client.openCase(slug);
    await vi.waitFor(() => expect(live.getState().status).toBe('live'), { timeout: 10_000 });
    await client.locks.acquire(card);
    client.drafts.open(card, { content: card.content });
    client.drafts.set(card, 'content', 'written across the token’s end');

    // baton refuses the first token now (its end, and the leeway baton gives it, have passed)
    await vi.waitFor(async () => expect(await refused(short)).toBe(true), { timeout: 15_000, interval: 250 });
    expect(asked[0]).toBe('expiring');
    expect(client.getToken()).not.toBe(short);
    expect(live.getState().status).toBe('live');
    expect(client.locks.info(card).state).toBe('owned');
    const draft = client.drafts.get(card)!;
    const saved = await client.save(card, { content: draft.values.content });
    expect(saved.content).toBe('written across the token’s end');
    const status = await rest<{ state: string; lock?: { sessionId: string } }>(server, server.adminToken, 'GET', `/locks/status?lockableType=Card&lockableParam=${card.id}`);
    expect(status.data).toMatchObject({ state: 'locked', lock: { sessionId: client.sessionId } });
  });

  it('a tab that starts with a token baton refuses gets a fresh one on the first 401', async () => {
    const { mint } = await scene();
    const fresh = await mint('1h');
    const client = tab(server, null, undefined, {
      token: 'not-a-token',
      getToken: ({ reason, current }) => (reason === 'refused' && current === 'not-a-token' ? fresh : current),
    });
    const me = await client.api.me();
    expect(me.name).toBe('Ada');
    expect(client.getToken()).toBe(fresh);
  });
});
