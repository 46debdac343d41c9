/**
 * A tab is one tab: a duplicated browser tab copies `sessionStorage`, and
 * with it the session id; it asks the origin's live tabs
 * (`BroadcastChannel`, Node's here) and takes a new id when the stored one
 * is another live tab's. A reload (the old page gone) keeps its id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BatonClient, SESSION_KEY } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { fakeFetch, ME, tokenFor } from './fakes.js';

const clients: BatonClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.dispose();
});

function tabWith(storage: MemoryStorage) {
  const { fetch, calls } = fakeFetch({ 'GET /me': () => ({ status: 200, body: { type: 'User', id: ME } }) });
  const client = new BatonClient({ baseUrl: 'http://baton.test', fetch, storage, token: tokenFor(ME), releaseOnPageHide: false, askBeforeUnload: false });
  clients.push(client);
  return { client, calls, storage };
}

/** What "Duplicate tab" does to `sessionStorage`: a copy. */
function copyOf(storage: MemoryStorage): MemoryStorage {
  const copy = new MemoryStorage();
  copy.setItem(SESSION_KEY, storage.getItem(SESSION_KEY)!);
  return copy;
}

describe('a duplicated tab', () => {
  it('takes a new session id, keeps it in its own storage, and sends only that one', async () => {
    const first = tabWith(new MemoryStorage());
    const original = first.client.sessionId;
    const copied = copyOf(first.storage);
    const duplicate = tabWith(copied);
    await duplicate.client.api.me();
    await new Promise((r) => setTimeout(r, 250));
    expect(duplicate.client.sessionId).not.toBe(original);
    expect(first.client.sessionId).toBe(original);
    expect(copied.getItem(SESSION_KEY)).toBe(duplicate.client.sessionId);
    // nothing went out under the other tab's id
    expect(duplicate.calls.map((c) => c.headers['x-session-id'])).toEqual([duplicate.client.sessionId]);
  });

  it('a reload (the old page is gone) keeps its id', async () => {
    const storage = new MemoryStorage();
    const before = tabWith(storage);
    const id = before.client.sessionId;
    before.client.dispose();
    const reloaded = tabWith(storage);
    await reloaded.client.api.me();
    await new Promise((r) => setTimeout(r, 250));
    expect(reloaded.client.sessionId).toBe(id);
    expect(reloaded.calls[0]?.headers['x-session-id']).toBe(id);
  });
});
