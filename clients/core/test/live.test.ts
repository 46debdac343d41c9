import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import {
  BatonClient,
  KickedError,
  NotFoundError,
  type CaseHandle,
  type CaseView,
  type ChangeFrame,
  type WebSocketConstructor,
} from '../src/index.js';
import { MemoryStorage, caseFor, person, rest, servers, sleep, tab, type Person, type ServerInfo } from '../../test/support.js';
import type { AnyRecord, CaseDetail } from '../src/types.js';

const cardsOf = (view: CaseView) => ({ cards: view.records.Card ?? [], locks: view.locks });

/** What both tabs must agree on: every card's content and version, and the locks. */
function contents(view: { cards: AnyRecord[]; locks: CaseView['locks'] }) {
  return {
    cards: view.cards.map((c) => `${c.param}:${c.version}:${String(c.content)}`).sort(),
    locks: view.locks.map((l) => `${l.lockable.type}/${l.lockable.param}:${l.user.name}`).sort(),
  };
}

/** A tab whose network can be switched off: while offline, its channel cannot connect. */
function flakyTab(server: ServerInfo, who: Person) {
  const network = { offline: false };
  class FlakyWebSocket extends WebSocket {
    constructor(url: string) {
      super(network.offline ? url.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:9') : url);
    }
  }
  const client = new BatonClient({
    baseUrl: server.baseUrl,
    WebSocket: FlakyWebSocket as unknown as WebSocketConstructor,
    storage: new MemoryStorage(),
    token: who.token,
    backoff: { initialDelay: 50, maxDelay: 200 },
    releaseOnPageHide: false,
  });
  return { client, network };
}

describe.each(servers())('live cases on $backend', (server) => {
  const clients: BatonClient[] = [];
  const track = (c: BatonClient) => (clients.push(c), c);
  afterEach(() => {
    for (const c of clients.splice(0)) c.dispose();
  });
  const live = async (c: BatonClient, slug: string): Promise<CaseHandle> => {
    const handle = c.openCase(slug);
    await vi.waitFor(() => expect(handle.live.getState().status).toBe('live'), { timeout: 10_000 });
    return handle;
  };

  it('loads the case and shows who is online', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards, page } = await caseFor(server, alice, [bob], 3);
    const a = await live(track(tab(server, alice)), kase.slug);
    const b = await live(track(tab(server, bob)), kase.slug);
    const state = a.live.getState();
    expect(state.case).toMatchObject({ slug: kase.slug, type: 'Case' });
    expect(state.role).toBe('manager');
    expect(state.records.Page?.map((p) => p.param)).toEqual([page.param]);
    expect(state.children[`Page/${page.param}`]?.Card?.map((c) => c.content)).toEqual(cards.map((c) => c.content));
    expect(state.schema?.types.map((t) => t.name)).toEqual(['Page', 'Card', 'Edgenote']);
    expect(a.live.store.get(`Card/${cards[1]!.param}`)).toMatchObject({ content: 'card 1' });
    for (const h of [a, b]) {
      await vi.waitFor(() =>
        expect(h.live.getState().onlineUsers.map((o) => o.user.name).sort()).toEqual(['Alice', 'Bob']),
      );
    }
  });

  it('converges on both tabs after a burst of edits, and drops its own echoes', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards, page } = await caseFor(server, alice, [bob], 3);
    const ca = track(tab(server, alice));
    const cb = track(tab(server, bob));
    const a = await live(ca, kase.slug);
    const b = await live(cb, kase.slug);
    const seenByA: ChangeFrame[] = [];
    const seenByB: ChangeFrame[] = [];
    a.live.onChange((f) => seenByA.push(f));
    b.live.onChange((f) => seenByB.push(f));

    await ca.locks.acquire(cards[0]!);
    const burst = async (client: BatonClient, handle: CaseHandle, card: (typeof cards)[number], who: string) => {
      for (let i = 0; i < 10; i++) {
        // save from the version this tab shows now
        const latest = handle.live.store.get<typeof card>(`Card/${card.param}`)!;
        await client.save(latest, { content: `${who} ${i}` });
      }
    };
    await Promise.all([
      burst(ca, a, cards[0]!, 'alice'),
      burst(cb, b, cards[1]!, 'bob'),
      cb.create('Card', page, { content: 'a new card from bob' }),
      ca.create('Card', page, { content: 'a new card from alice' }),
    ]);
    await ca.locks.release(cards[0]!);

    const truth = (await rest<CaseDetail>(server, alice.token, 'GET', `/cases/${kase.slug}`)).data;
    const truthCards = (truth.pages as { cards: AnyRecord[] }[]).flatMap((p) => p.cards);
    const expected = contents({ cards: truthCards, locks: truth.activeLocks });
    expect(expected.cards).toHaveLength(5);
    await vi.waitFor(() => {
      expect(contents(cardsOf(a.live.getState()))).toEqual(expected);
      expect(contents(cardsOf(b.live.getState()))).toEqual(expected);
    });

    // each tab saw the other's changes, and none of its own
    const byCard = (frames: ChangeFrame[], param: string) =>
      frames.filter((f) => f.watchable.type === 'Card' && f.watchable.param === param).length;
    expect(byCard(seenByB, cards[0]!.param)).toBe(10);
    expect(byCard(seenByA, cards[0]!.param)).toBe(0);
    expect(byCard(seenByA, cards[1]!.param)).toBe(10);
    expect(byCard(seenByB, cards[1]!.param)).toBe(0);
    expect(seenByB.filter((f) => f.watchable.type === 'Lock').length).toBeGreaterThanOrEqual(2);
    expect(seenByA.filter((f) => f.watchable.type === 'Lock')).toHaveLength(0);
    expect(seenByA.every((f) => f.editorSessionId !== ca.sessionId)).toBe(true);
  });

  it('a record deleted under its lock leaves both tabs, with its lock', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob], 2);
    const ca = track(tab(server, alice));
    const a = await live(ca, kase.slug);
    const b = await live(track(tab(server, bob)), kase.slug);
    await ca.locks.acquire(cards[0]!);
    await vi.waitFor(() => expect(b.live.getState().lockOn[`Card/${cards[0]!.param}`]?.user.name).toBe('Alice'));
    await ca.destroy(cards[0]!);
    expect(ca.locks.info(cards[0]!).state).toBe('unlocked');
    expect(a.live.store.get(`Card/${cards[0]!.param}`)).toBeUndefined();
    await vi.waitFor(() => {
      const view = b.live.getState();
      expect(view.records.Card?.map((c) => c.param)).toEqual([cards[1]!.param]);
      expect(view.locks).toHaveLength(0);
    });
  });

  it('keeps the lock through a reconnect within the grace, and refetches what it missed', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const { client: ca, network } = flakyTab(server, alice);
    track(ca);
    const a = await live(ca, kase.slug);
    const lock = await ca.locks.acquire(cards[0]!);

    network.offline = true;
    a.live.reconnect();
    await vi.waitFor(() => expect(a.live.getState().status).toBe('reconnecting'));
    // bob edits another card while alice's tab is away: its frame is lost to alice
    await rest(server, bob.token, 'PATCH', `/cards/${cards[1]!.param}`, { card: { content: 'edited while away' } });
    await sleep(400);
    network.offline = false;
    await vi.waitFor(() => expect(a.live.getState().status).toBe('live'), { timeout: 10_000 });
    expect(a.live.store.get(`Card/${cards[1]!.param}`)).toMatchObject({ content: 'edited while away' });

    // well past the grace (1s) and the lease (2s): the channel's pongs keep the lock
    await sleep(3000);
    const status = await rest<{ state: string; lock?: { token: string } }>(
      server,
      bob.token,
      'GET',
      `/locks/status?lockableType=Card&lockableParam=${cards[0]!.param}`,
    );
    expect(status.data.state).toBe('locked');
    expect(status.data.lock?.token).toBe(lock.token);
    expect(ca.locks.info(cards[0]!).state).toBe('owned');
    await ca.save(cards[0]!, { content: 'saved after the reconnect' });
  });

  it('tells the app when a drop outlasts the grace and the lock is gone', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const { client: ca, network } = flakyTab(server, alice);
    track(ca);
    const a = await live(ca, kase.slug);
    await ca.locks.acquire(cards[0]!);
    network.offline = true;
    a.live.reconnect();
    await sleep(2500); // grace 1s, reaper 100ms
    network.offline = false;
    await vi.waitFor(() => expect(a.live.getState().status).toBe('live'), { timeout: 10_000 });
    expect(ca.locks.info(cards[0]!)).toMatchObject({ state: 'lost', lostTo: null });
  });

  it('stops, and says so, when the tab is kicked', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const ca = track(tab(server, alice));
    const a = await live(ca, kase.slug);
    await ca.locks.acquire(cards[0]!);
    const kicked = await rest(server, server.adminToken, 'DELETE', `/admin/sessions/${ca.sessionId}`);
    expect(kicked.status).toBeLessThan(300);
    await vi.waitFor(() => expect(a.live.getState().status).toBe('stopped'));
    expect(a.live.getState().error).toBeInstanceOf(KickedError);
    await sleep(500);
    expect(a.live.getState().status).toBe('stopped');
    const sessions = await rest<unknown[]>(server, server.adminToken, 'GET', '/admin/sessions');
    expect(JSON.stringify(sessions.data)).not.toContain(ca.sessionId);
  });

  it('stops with NotFound when the case is deleted while open', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase } = await caseFor(server, alice, [bob]);
    const b = await live(track(tab(server, bob)), kase.slug);
    const deleted = await rest(server, alice.token, 'DELETE', `/cases/${kase.slug}`);
    expect(deleted.status).toBe(204);
    await vi.waitFor(() => expect(b.live.getState().status).toBe('stopped'));
    expect(b.live.getState().error).toBeInstanceOf(NotFoundError);
  });

  it('refetches the case on reconnect', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const ca = track(tab(server, alice));
    const a = await live(ca, kase.slug);
    const fetched = vi.spyOn(ca.api, 'case');
    a.live.reconnect();
    await vi.waitFor(() => expect(fetched).toHaveBeenCalled(), { timeout: 10_000 });
    await vi.waitFor(() => expect(a.live.getState().status).toBe('live'));
    expect(a.live.store.get(`Card/${cards[0]!.param}`)).toBeDefined();
  });

  // SQLite has no event feed to cut
  it.skipIf(server.backend !== 'postgres')("loses nothing when the server's event feed is cut (PostgreSQL)", async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const ca = track(tab(server, alice));
    const a = await live(ca, kase.slug);
    const fetched = vi.spyOn(ca.api, 'case');
    const url = server.env.DATABASE_URL!;
    const db = new URL(url).pathname.slice(1);
    const cut = execFileSync('psql', [
      url,
      '-Atc',
      `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '${db}' AND application_name = 'baton event listener'`,
    ]);
    expect(cut.toString().trim()).toBe('1');
    // written while the server's listener reconnects: it resumes from the outbox
    await rest(server, alice.token, 'PATCH', `/cards/${cards[0]!.param}`, { card: { content: 'written during the cut' } });
    await vi.waitFor(() => expect(a.live.store.get(`Card/${cards[0]!.param}`)).toMatchObject({ content: 'written during the cut' }), {
      timeout: 10_000,
    });
    expect(a.live.getState().status).toBe('live');
    expect(fetched).not.toHaveBeenCalled();
  });
});
