import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, CaseStore, Schema, type CaseDetail, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, bob, card, caseDetail, deferred, fakeFetch, lockOn, page, schemaDoc, tokenFor } from './fakes.js';

const loaded = () => {
  const store = new CaseStore();
  store.setSchema(new Schema(schemaDoc));
  store.reset(caseDetail() as unknown as CaseDetail);
  return store;
};

describe('structural sharing', () => {
  it('a frame about one card keeps every other record, list and map identical', () => {
    const store = loaded();
    const before = store.getView();
    store.apply({ type: 'update', watchable: card(21, 2, 2, 'edited'), editorSessionId: 'tab-2' });
    const after = store.getView();
    expect(after).not.toBe(before);
    // page 1's cards: the same array, the same card objects
    expect(after.children['Page/1']).toBe(before.children['Page/1']);
    expect(after.children['Page/1']?.Card).toBe(before.children['Page/1']?.Card);
    expect(after.children['Case/5']?.Page).toBe(before.children['Case/5']?.Page);
    expect(after.records.Page).toBe(before.records.Page);
    // page 2's list changed, and only the edited card in it
    expect(after.children['Page/2']?.Card).not.toBe(before.children['Page/2']?.Card);
    expect(after.children['Page/2']?.Card?.[1]).toBe(before.children['Page/2']?.Card?.[1]);
    expect(after.children['Page/2']?.Card?.[0]?.content).toBe('edited');
    expect(after.locks).toBe(before.locks);
    expect(after.lockOn).toBe(before.lockOn);
    expect(after.lineOn).toBe(before.lineOn);
  });

  it('a presence frame changes presence alone', () => {
    const store = loaded();
    const before = store.getView();
    store.setOnlineUsers([{ user: bob, color: bob.color, sessions: 1 }] as never);
    const after = store.getView();
    expect(after.onlineUsers).not.toBe(before.onlineUsers);
    expect(after.records).toBe(before.records);
    expect(after.children).toBe(before.children);
    expect(after.locks).toBe(before.locks);
  });

  it('a lock on one card keeps the records; its lockOn entry is new, the others are the same', () => {
    const store = loaded();
    store.apply({ type: 'create', watchable: lockOn(card(11, 1), 70, bob, 'tab-b'), editorSessionId: 'tab-b' });
    const before = store.getView();
    store.apply({ type: 'create', watchable: lockOn(card(12, 1), 71, bob, 'tab-b'), editorSessionId: 'tab-b' });
    const after = store.getView();
    expect(after.children).toBe(before.children);
    expect(after.lockOn['Card/11']).toBe(before.lockOn['Card/11']);
    expect(after.lockOn['Card/12']?.token).toBe('71');
  });
});

describe('tombstones', () => {
  it('a deleted record stays deleted when a late reply or an older update about it comes', () => {
    const store = loaded();
    store.apply({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '11', id: 11 } as never, editorSessionId: 'tab-2' });
    // the answer of a save that was in flight
    store.upsert(card(11, 1, 2, 'late save'));
    store.apply({ type: 'update', watchable: card(11, 1, 3, 'late frame'), editorSessionId: 'tab-2' });
    // a lock taken on it just before it went
    store.upsert(lockOn(card(11, 1), 80));
    const view = store.getView();
    expect(store.get('Card/11')).toBeUndefined();
    expect(view.children['Page/1']?.Card?.map((c) => c.param)).toEqual(['12']);
    expect(view.lockOn['Card/11']).toBeUndefined();
    // a create is a new record (and a snapshot is the truth)
    store.apply({ type: 'create', watchable: card(11, 1, 1, 'new'), editorSessionId: 'tab-2' });
    expect(store.get('Card/11')).toMatchObject({ content: 'new' });
  });

  it('a page deleted takes its cards with it, for good', () => {
    const store = loaded();
    store.apply({ type: 'destroy', watchable: { type: 'Page', table: 'pages', param: '1', id: 1 } as never, editorSessionId: 'tab-2' });
    store.upsert(card(12, 1, 2, 'late'));
    store.upsert(page(1, 2));
    expect(store.get('Card/12')).toBeUndefined();
    expect(store.get('Page/1')).toBeUndefined();
    expect(store.getView().records.Page?.map((p) => p.param)).toEqual(['2']);
  });

  describe('through the client', () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('a save answered after the record was deleted does not bring it back', async () => {
      FakeSocket.all = [];
      const patch = deferred<{ status: number; body: unknown }>();
      const { fetch } = fakeFetch({
        'GET /schema': () => ({ status: 200, body: schemaDoc }),
        'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
        'PATCH /cards/11': () => patch.promise,
      });
      const client = new BatonClient({
        baseUrl: 'http://baton.test',
        fetch,
        WebSocket: FakeSocket as unknown as WebSocketConstructor,
        storage: new MemoryStorage(),
        sessionId: SESSION,
        token: tokenFor(ME),
        releaseOnPageHide: false,
        signals: {},
      });
      const { live } = client.openCase('demo');
      FakeSocket.last.welcome();
      await vi.advanceTimersByTimeAsync(0);
      const saving = client.save(card(11, 1), { content: 'mine' });
      await vi.advanceTimersByTimeAsync(0);
      FakeSocket.last.frame({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '11', id: 11 }, editorSessionId: 'tab-2', editorUserId: 2 });
      patch.resolve({ status: 200, body: card(11, 1, 2, 'mine') });
      await saving;
      expect(live.store.get('Card/11')).toBeUndefined();
      expect(live.getState().children['Page/1']?.Card?.map((c) => c.param)).toEqual(['12']);
      client.dispose();
    });
  });
});

describe('tombstones outlive a snapshot', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a save answered after a reconnect does not bring back a record deleted before it', async () => {
    FakeSocket.all = [];
    const patch = deferred<{ status: number; body: unknown }>();
    let deleted = false;
    const { fetch } = fakeFetch({
      'GET /schema': () => ({ status: 200, body: schemaDoc }),
      'GET /cases/demo': () => {
        const detail = caseDetail();
        if (deleted) detail.pages[0]!.cards = [card(12, 1)];
        return { status: 200, body: detail };
      },
      'PATCH /cards/11': () => patch.promise,
    });
    const client = new BatonClient({
      baseUrl: 'http://baton.test',
      fetch,
      WebSocket: FakeSocket as unknown as WebSocketConstructor,
      storage: new MemoryStorage(),
      sessionId: SESSION,
      token: tokenFor(ME),
      releaseOnPageHide: false,
      askBeforeUnload: false,
      signals: {},
      backoff: { initialDelay: 100, maxDelay: 100 },
    });
    const { live } = client.openCase('demo');
    FakeSocket.last.welcome();
    await vi.advanceTimersByTimeAsync(0);
    const saving = client.save(card(11, 1), { content: 'mine' });
    await vi.advanceTimersByTimeAsync(0);
    FakeSocket.last.frame({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '11', id: 11 }, editorSessionId: 'tab-2', editorUserId: 2 });
    deleted = true;
    // the connection drops and comes back: a fresh snapshot (without the card)
    FakeSocket.last.drop();
    await vi.advanceTimersByTimeAsync(100);
    FakeSocket.last.welcome();
    await vi.advanceTimersByTimeAsync(0);
    expect(live.getState().status).toBe('live');
    // the save's answer, late
    patch.resolve({ status: 200, body: card(11, 1, 2, 'mine') });
    await saving;
    expect(live.store.get('Card/11')).toBeUndefined();
    expect(live.getState().children['Page/1']?.Card?.map((c) => c.param)).toEqual(['12']);
    client.dispose();
  });

  it('a record deleted before a snapshot was asked for comes back when that snapshot has it', () => {
    const store = loaded();
    store.apply({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '11', id: 11 } as never, editorSessionId: 'tab-2' });
    const asked = store.mark();
    store.reset(caseDetail() as unknown as CaseDetail, asked);
    expect(store.get('Card/11')).toMatchObject({ content: 'card 11' });
    // deleted while a snapshot was on its way: that snapshot cannot bring it back
    const before = store.mark();
    store.apply({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '11', id: 11 } as never, editorSessionId: 'tab-2' });
    store.reset(caseDetail() as unknown as CaseDetail, before);
    expect(store.get('Card/11')).toBeUndefined();
  });
});

describe('a refetch keeps what did not change', () => {
  it('every record whose version is unchanged stays the same object, and so do the lists', () => {
    const store = loaded();
    const before = store.getView();
    const lock = lockOn(card(12, 1), 70, bob, 'tab-b');
    store.apply({ type: 'create', watchable: lock, editorSessionId: 'tab-b' });
    const locked = store.getView();
    const detail = caseDetail();
    detail.pages[1]!.cards[0] = card(21, 2, 2, 'edited elsewhere');
    // the lock comes again with a renewed lease: the same lock
    store.reset({ ...detail, activeLocks: [{ ...lock, expiresAt: '2026-01-01T00:05:00Z' }] } as unknown as CaseDetail);
    const after = store.getView();
    expect(store.get('Card/11')).toBe(before.children['Page/1']?.Card?.[0]);
    expect(after.children['Page/1']?.Card).toBe(before.children['Page/1']?.Card);
    expect(after.records.Page).toBe(before.records.Page);
    expect(after.case).toBe(before.case);
    expect(after.lockOn['Card/12']).toBe(locked.lockOn['Card/12']);
    expect(after.locks).toBe(locked.locks);
    // only what changed is new
    expect(after.children['Page/2']?.Card?.[0]?.content).toBe('edited elsewhere');
    expect(after.children['Page/2']?.Card?.[1]).toBe(before.children['Page/2']?.Card?.[1]);
  });
});

describe('a frame costs what it changed', () => {
  /** The lists a store should show, sorted from scratch. */
  function expected(store: CaseStore) {
    const cards = store.all('Card').sort((a, b) => (a.position ?? 0) - (b.position ?? 0) || a.id - b.id);
    const pages = store.all('Page').sort((a, b) => (a.position ?? 0) - (b.position ?? 0) || a.id - b.id);
    const children: Record<string, string[]> = {};
    for (const c of cards) (children[`Page/${String(c.pageId)}`] ??= []).push(c.param);
    return { cards: cards.map((c) => c.param), pages: pages.map((p) => p.param), children };
  }

  it('patched views equal views built from scratch, through creates, edits, moves and deletes', () => {
    const store = loaded();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    const versions = new Map<number, number>();
    const ids = [11, 12, 21, 22];
    for (let step = 0; step < 400; step++) {
      const before = store.getView();
      const kind = random(4);
      const id = ids[random(ids.length)]!;
      const v = (versions.get(id) ?? 1) + 1;
      if (kind === 0) {
        const fresh = 100 + step;
        ids.push(fresh);
        store.apply({ type: 'create', watchable: card(fresh, 1 + random(2)), editorSessionId: 'tab-2' });
      } else if (kind === 1 && store.get(`Card/${id}`)) {
        versions.set(id, v);
        store.apply({ type: 'update', watchable: { ...card(id, 1 + random(2), v), position: random(50) }, editorSessionId: 'tab-2' });
      } else if (kind === 2 && store.get(`Card/${id}`)) {
        versions.set(id, v);
        const now = store.get<ReturnType<typeof card>>(`Card/${id}`)!;
        store.apply({ type: 'update', watchable: { ...now, version: v, content: `edit ${step}` }, editorSessionId: 'tab-2' });
      } else {
        store.apply({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: String(id), id } as never, editorSessionId: 'tab-2' });
      }
      const view = store.getView();
      const want = expected(store);
      expect(view.records.Card?.map((c) => c.param) ?? []).toEqual(want.cards);
      expect(view.records.Page?.map((p) => p.param)).toEqual(want.pages);
      for (const pageKey of ['Page/1', 'Page/2']) {
        expect(view.children[pageKey]?.Card?.map((c) => c.param) ?? []).toEqual(want.children[pageKey] ?? []);
        // a list with the same records in the same order is the same array
        const was = before.children[pageKey]?.Card;
        const now = view.children[pageKey]?.Card;
        if (was && now && was.length === now.length && was.every((c, i) => c === now[i])) expect(now).toBe(was);
      }
      for (const c of view.records.Card ?? []) expect(store.get(`Card/${c.param}`)).toBe(c);
    }
  });
});
