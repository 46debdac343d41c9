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
