import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { BatonClient, type Lock, type Waiter, type WebSocketConstructor } from '../src/index.js';
import { MemoryStorage, caseFor, person, rest, servers, sleep, tabsDisposedAfterEach, type Card, type Person, type ServerInfo } from '../../test/support.js';

/** The lock status of a record as baton has it, with the record's line. */
async function status(server: ServerInfo, who: Person, card: Card) {
  const { data } = await rest<{ state: string; lock?: Lock; waiters?: Waiter[] }>(
    server,
    who.token,
    'GET',
    `/locks/status?lockableType=Card&lockableParam=${card.param}`,
  );
  return { state: data.state, holder: data.lock?.user.name ?? null, line: (data.waiters ?? []).map((w) => w.user.name) };
}

const names = (waiters: Waiter[]) => waiters.map((w) => w.user.name);

describe.each(servers())('waiting lines on $backend', (server) => {
  const client = tabsDisposedAfterEach();
  const opened: BatonClient[] = [];

  /** A tab whose every request is counted. */
  function watchedTab(who: Person) {
    const requests: string[] = [];
    const c = new BatonClient({
      baseUrl: server.baseUrl,
      fetch: (input, init) => (requests.push(`${init?.method ?? 'GET'} ${input}`), fetch(input, init)),
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      storage: new MemoryStorage(),
      token: who.token,
      backoff: { initialDelay: 50, maxDelay: 400 },
      releaseOnPageHide: false,
    });
    opened.push(c);
    return { c, requests };
  }

  async function live(c: BatonClient, slug: string): Promise<void> {
    const { live: l } = c.openCase(slug);
    await vi.waitFor(() => expect(l.getState().status).toBe('live'), { timeout: 10_000 });
  }

  /** Bob, Carol and Dave edit a case Olive manages; each has a tab with the case open. */
  async function scene() {
    const [olive, bob, carol, dave] = await Promise.all(['Olive', 'Bob', 'Carol', 'Dave'].map((n) => person(server, n)));
    const { kase, cards } = await caseFor(server, olive!, [bob!, carol!, dave!]);
    const b = client(server, bob!);
    const watched = watchedTab(carol!);
    const d = client(server, dave!);
    for (const t of [b, watched.c, d]) await live(t, kase.slug);
    return { olive: olive!, bob: bob!, carol: carol!, dave: dave!, kase, card: cards[0]!, b, c: watched.c, d, carolRequests: watched.requests };
  }

  const cleanup = () => {
    for (const c of opened.splice(0)) c.dispose();
  };

  it('waits in line with a position, and gets the lock over the channel without asking', async () => {
    try {
      const { carol, card, b, c, d, carolRequests } = await scene();
      await b.locks.acquire(card);

      const joined = await c.locks.wait(card);
      expect(joined).toMatchObject({ type: 'Waiter', position: 1, sessionId: c.sessionId, lockable: { type: 'Card', param: card.param } });
      expect(c.locks.info(card)).toMatchObject({ state: 'waiting', position: 1, holder: { name: 'Bob' } });
      // asking again keeps the place
      expect((await c.locks.wait(card)).id).toBe(joined.id);
      expect(await d.locks.wait(card)).toMatchObject({ type: 'Waiter', position: 2 });
      expect(d.locks.info(card)).toMatchObject({ state: 'waiting', position: 2 });

      // the holder sees who is waiting, in line order
      await vi.waitFor(() => expect(names(b.locks.info(card).waiters)).toEqual(['Carol', 'Dave']));
      expect(b.locks.info(card).state).toBe('owned');
      expect(await status(server, carol, card)).toEqual({ state: 'locked', holder: 'Bob', line: ['Carol', 'Dave'] });

      // Bob saves and stops: Carol's tab is told by the channel, and sends nothing meanwhile
      const asked = carolRequests.length;
      const saved = await b.save(card, { content: 'Bob is done' });
      await b.locks.release(card);
      await vi.waitFor(() => expect(c.locks.info(card)).toMatchObject({ state: 'owned', holder: { name: 'Carol' } }));
      expect(carolRequests.slice(asked)).toEqual([]);
      expect(c.locks.info(card).lock?.sessionId).toBe(c.sessionId);
      expect(c.locks.info(card).waiters.map((w) => w.user.name)).toEqual(['Dave']);

      // Dave moves up without a frame about him; everyone sees Carol holding it
      await vi.waitFor(() => expect(d.locks.info(card)).toMatchObject({ state: 'waiting', position: 1, holder: { name: 'Carol' } }));
      await vi.waitFor(() => expect(b.locks.info(card)).toMatchObject({ state: 'locked', holder: { name: 'Carol' } }));
      expect(names(b.locks.info(card).waiters)).toEqual(['Dave']);

      // the handed-over lock is a real one: Carol saves with its token
      const carolSaved = await c.save(saved, { content: 'Carol carries on' });
      expect(carolSaved.version).toBe(saved.version + 1);
      await expect(b.save(carolSaved, { content: 'Bob again' })).rejects.toMatchObject({ status: 423 });

      // and when Carol stops, Dave gets it
      await c.locks.release(card);
      await vi.waitFor(() => expect(d.locks.info(card)).toMatchObject({ state: 'owned', position: null, waiters: [] }));
      expect(await status(server, carol, card)).toEqual({ state: 'locked', holder: 'Dave', line: [] });
    } finally {
      cleanup();
    }
  });

  it('leaves the line with one call, and DELETE /locks?session=mine leaves every line', async () => {
    try {
      const { bob, carol, card, b, c, d } = await scene();
      await b.locks.acquire(card);
      await c.locks.wait(card);
      await d.locks.wait(card);
      await vi.waitFor(() => expect(names(b.locks.info(card).waiters)).toEqual(['Carol', 'Dave']));

      await c.locks.leave(card);
      expect(c.locks.info(card)).toMatchObject({ state: 'locked', position: null, lineEnded: null });
      await vi.waitFor(() => expect(d.locks.info(card).position).toBe(1));
      await vi.waitFor(() => expect(names(b.locks.info(card).waiters)).toEqual(['Dave']));
      // leaving twice is fine
      await c.locks.leave(card);

      await d.locks.releaseAll();
      expect(d.locks.info(card).state).toBe('locked');
      await vi.waitFor(() => expect(b.locks.info(card).waiters).toEqual([]));
      expect(await status(server, carol, card)).toEqual({ state: 'locked', holder: 'Bob', line: [] });

      // nobody is waiting: the record is free when Bob stops
      await b.locks.release(card);
      expect(await status(server, bob, card)).toEqual({ state: 'unlocked', holder: null, line: [] });
      await vi.waitFor(() => expect(c.locks.info(card).state).toBe('unlocked'));
    } finally {
      cleanup();
    }
  });

  it('a tab that goes away leaves the line for everyone after the grace', async () => {
    try {
      const { bob, card, b, c } = await scene();
      await b.locks.acquire(card);
      await c.locks.wait(card);
      await vi.waitFor(() => expect(names(b.locks.info(card).waiters)).toEqual(['Carol']));
      c.dispose();
      await vi.waitFor(() => expect(b.locks.info(card).waiters).toEqual([]), { timeout: 8_000 });
      await b.locks.release(card);
      expect(await status(server, bob, card)).toEqual({ state: 'unlocked', holder: null, line: [] });
    } finally {
      cleanup();
    }
  });

  it('"Edit anyway" skips the line, and a lock handed over can be lost like any other', async () => {
    try {
      const { olive, card, b, c, d } = await scene();
      await b.locks.acquire(card);
      await c.locks.wait(card);
      await d.locks.wait(card);

      // Dave takes over from Bob: his place in the line ends, Carol's stays
      await d.locks.editAnyway(card);
      expect(d.locks.info(card)).toMatchObject({ state: 'owned', position: null });
      await vi.waitFor(() => expect(b.locks.info(card)).toMatchObject({ state: 'lost', lostTo: { name: 'Dave' } }));
      await vi.waitFor(() => expect(names(c.locks.info(card).waiters)).toEqual(['Carol']));
      expect(c.locks.info(card)).toMatchObject({ state: 'waiting', position: 1, holder: { name: 'Dave' } });

      // Dave stops: Carol is next
      await d.locks.release(card);
      await vi.waitFor(() => expect(c.locks.info(card).state).toBe('owned'));

      // Olive, who manages the case, takes it over from Carol
      const o = client(server, olive);
      await o.locks.editAnyway(card);
      await vi.waitFor(() =>
        expect(c.locks.info(card)).toMatchObject({ state: 'lost', lostTo: { name: 'Olive' }, lostReason: 'overridden' }),
      );
      await expect(c.save(card, { content: 'Carol, too late' })).rejects.toMatchObject({ status: 423 });
    } finally {
      cleanup();
    }
  });

  it('without a channel, the kit keeps its place in line alive and finds out when the lock is its own', async () => {
    try {
      const bob = await person(server, 'Bob');
      const carol = await person(server, 'Carol');
      const { kase, cards } = await caseFor(server, await person(server, 'Olive'), [bob, carol]);
      const card = cards[0]!;
      const b = client(server, bob);
      await live(b, kase.slug);
      const { c } = watchedTab(carol);
      await b.locks.acquire(card);
      await c.locks.wait(card);
      expect(c.locks.info(card)).toMatchObject({ state: 'waiting', position: 1 });

      // longer than the lease (BATON_LOCK_TTL 2s): the kit renews it
      await sleep(3_000);
      expect(await status(server, bob, card)).toMatchObject({ line: ['Carol'] });
      await vi.waitFor(() => expect(names(b.locks.info(card).waiters)).toEqual(['Carol']));

      await b.locks.release(card);
      await vi.waitFor(() => expect(c.locks.info(card)).toMatchObject({ state: 'owned', holder: { name: 'Carol' } }), { timeout: 5_000 });
      await c.save(card, { content: 'Carol got it' });
    } finally {
      cleanup();
    }
  });
});
