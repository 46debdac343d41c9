import { describe, expect, it } from 'vitest';
import {
  CaseStore,
  LockHeldError,
  NoneFreeError,
  RateLimitedError,
  Schema,
  backoffDelay,
  errorFromResponse,
  parseFrame,
  positionIn,
  tabSessionId,
  type Waiter,
} from '../src/index.js';
import { MemoryStorage } from '../../test/support.js';

describe('frames', () => {
  it('ignores frames it does not know instead of throwing', () => {
    expect(parseFrame('{"type":"hologram","data":1}')).toBeNull();
    expect(parseFrame('not json')).toBeNull();
    expect(parseFrame('[1,2]')).toBeNull();
    expect(parseFrame('null')).toBeNull();
    expect(parseFrame('{"type":"resync","missed":3}')).toEqual({ type: 'resync', missed: 3 });
  });

  it('a store ignores a change frame without an identity', () => {
    const store = new CaseStore();
    store.apply({ type: 'update', watchable: {} as never, editorSessionId: null });
    expect(store.getView().records).toEqual({});
  });
});

describe('backoff', () => {
  it('doubles up to the maximum, with jitter in the upper half', () => {
    const opts = { initialDelay: 100, maxDelay: 1000 };
    expect(backoffDelay(0, opts, () => 0)).toBe(50);
    expect(backoffDelay(0, opts, () => 1)).toBe(100);
    expect(backoffDelay(3, opts, () => 1)).toBe(800);
    expect(backoffDelay(10, opts, () => 1)).toBe(1000);
    expect(backoffDelay(10, opts, () => 0)).toBe(500);
  });
});

describe('errors', () => {
  it('maps codes to typed errors', () => {
    const headers = new Headers({ 'Retry-After': '7' });
    const limited = errorFromResponse(429, { error: { code: 'rate_limited', message: 'slow down' } }, headers);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited).retryAfter).toBe(7);
    const held = errorFromResponse(409, { error: { code: 'lock_held', message: 'held', lock: { token: '4' } } }, headers);
    expect(held).toBeInstanceOf(LockHeldError);
    expect((held as LockHeldError).lock.token).toBe('4');
  });
});

describe('session id', () => {
  it('is made once per tab storage and kept', () => {
    const storage = new MemoryStorage();
    const id = tabSessionId(storage);
    expect(tabSessionId(storage)).toBe(id);
    expect(tabSessionId(new MemoryStorage())).not.toBe(id);
  });
});

describe('waiting lines', () => {
  const user = { type: 'User' as const, table: 'users' as const, param: '1', id: 1, name: 'Carol', color: '#000000' };
  const waiter = (id: number, card: string, position = 1): Waiter => ({
    type: 'Waiter',
    table: 'lock_waiters',
    param: String(id),
    id,
    lockable: { type: 'Card', table: 'cards', param: card },
    caseId: 1,
    user,
    sessionId: `tab-${id}`,
    position,
    createdAt: '2026-11-24T10:00:00Z',
    expiresAt: '2026-11-24T10:00:30Z',
  });

  it('keeps each record in line order and counts positions itself', () => {
    const store = new CaseStore();
    const card = { type: 'Card', table: 'cards', param: '2', id: 2, caseId: 1, pageId: 1, position: 1, content: 'x', version: 1 };
    store.apply({ type: 'create', watchable: card as never, editorSessionId: null });
    for (const w of [waiter(9, '1', 2), waiter(4, '1'), waiter(5, '2')]) {
      store.apply({ type: 'create', watchable: w as never, editorSessionId: null });
    }
    const line = store.getView().lineOn['Card/1']!;
    expect(line.map((w) => w.id)).toEqual([4, 9]);
    expect(store.getView().lineOn['Card/2']!.map((w) => w.id)).toEqual([5]);
    expect(positionIn(line, waiter(9, '1'))).toBe(2);
    // the first leaves: no frame says so to the second, who is next now
    store.apply({ type: 'destroy', watchable: { ...waiter(4, '1'), reason: 'left' } as never, editorSessionId: null });
    const after = store.getView().lineOn['Card/1']!;
    expect(positionIn(after, after[0]!)).toBe(1);
    // a deleted record takes its line with it
    store.apply({ type: 'destroy', watchable: { type: 'Card', table: 'cards', param: '2', id: 2 } as never, editorSessionId: null });
    expect(store.getView().lineOn['Card/2']).toBeUndefined();
  });
});

describe('deep locks in the store', () => {
  const user = { type: 'User', table: 'users', param: '1', id: 1, name: 'Alice', color: '#e6194b' } as const;
  const lockOn = (type: 'Page' | 'Case', param: string, depth: '0' | 'infinity') => ({
    type: 'Lock' as const,
    table: 'locks' as const,
    param: '9',
    id: 9,
    token: '9',
    lockable: { type, table: type === 'Page' ? 'pages' : 'cases', param },
    depth,
    caseId: 5,
    user,
    sessionId: 'tab-a',
    createdAt: '2026-01-01T00:00:00Z',
    expiresAt: '2026-01-01T00:01:00Z',
    lastActivityAt: '2026-01-01T00:00:00Z',
  });
  const at = '2026-01-01T00:00:00Z';
  const page = { type: 'Page', table: 'pages', param: '3', id: 3, caseId: 5, position: 0, title: 'P', version: 1, createdAt: at, updatedAt: at } as const;
  const card = { type: 'Card', table: 'cards', param: '12', id: 12, caseId: 5, pageId: 3, position: 0, content: 'c', version: 1, createdAt: at, updatedAt: at } as const;
  const note = { type: 'Edgenote', table: 'edgenotes', param: '4', id: 4, caseId: 5, slug: 'n', caption: 'N', content: 'x', version: 1, createdAt: at, updatedAt: at } as const;

  const rules = { lease: null, takeover: 'editor', wait: true };
  // the keys are the server's (GET /schema): the kit derives none from a name
  const camel = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
  const declared = (name: string, plural: string, parent: string) => ({
    name, plural, table: plural, parent, store: 'baton', ordered: true, movable: false, label: null,
    bodyKey: camel(name), parentKey: parent === 'Case' ? 'caseId' : `${camel(parent)}Id`, nestKey: camel(plural),
    fields: {}, required: [], unique: [], lock: rules,
  });
  // three levels, as in the book: a deep lock covers every level below it
  const schema = new Schema({
    types: [declared('Page', 'pages', 'Case'), declared('Card', 'cards', 'Page'), declared('Edgenote', 'edgenotes', 'Case'), declared('Note', 'notes', 'Card')],
  });
  const footnote = { type: 'Note', table: 'notes', param: '7', id: 7, caseId: 5, cardId: 12, position: 0, version: 1 } as const;
  const known = new Map<string, { type: string; caseId?: unknown }>([['Page/3', page], ['Card/12', card]]);
  const containerKeys = (record: { type: string; caseId?: unknown }) => schema.containerKeys(record, (k) => known.get(k));

  it('the schema says where a record is: a card inside its page and its case, a note inside its card too', () => {
    expect(containerKeys(footnote)).toEqual(['Card/12', 'Page/3', 'Case/5']);
    expect(schema.parentKey('Card')).toBe('pageId');
    expect(schema.parentKey('Page')).toBeNull();
    expect(schema.childrenOf('Page').map((t) => t.name)).toEqual(['Card']);
  });

  it('keys come from the schema, also for a name with an acronym (APIEndpoint → apiEndpoint, not aPIEndpoint)', () => {
    const api = new Schema({
      types: [
        { ...declared('APIGroup', 'api_groups', 'Case'), bodyKey: 'apiGroup', nestKey: 'apiGroups' },
        { ...declared('APIEndpoint', 'api_endpoints', 'APIGroup'), bodyKey: 'apiEndpoint', parentKey: 'apiGroupId', nestKey: 'apiEndpoints' },
      ],
    });
    expect(api.bodyKey('APIEndpoint')).toBe('apiEndpoint');
    expect(api.parentKey('APIEndpoint')).toBe('apiGroupId');
    expect(api.parentKey('APIGroup')).toBeNull();
    expect(api.nestKey('APIEndpoint')).toBe('apiEndpoints');
    expect(api.bodyKey('Nope')).toBeUndefined();
    const endpoint = { type: 'APIEndpoint', caseId: 5, apiGroupId: 2 };
    expect(api.parentOf(endpoint)).toBe('APIGroup/2');

    // GET /cases/:slug nests them under the server's nest keys: the store finds them there
    const store = new CaseStore();
    store.setSchema(api);
    store.reset({
      type: 'Case', table: 'cases', param: '5', id: 5, slug: 's', title: 'S', version: 1, createdAt: at, updatedAt: at,
      apiGroups: [
        {
          type: 'APIGroup', table: 'api_groups', param: '2', id: 2, caseId: 5, position: 0, version: 1, createdAt: at, updatedAt: at,
          apiEndpoints: [{ type: 'APIEndpoint', table: 'api_endpoints', param: '9', id: 9, caseId: 5, apiGroupId: 2, position: 0, version: 1, createdAt: at, updatedAt: at }],
        },
      ],
      activeLocks: [], waiters: [], onlineUsers: [], role: 'editor',
    } as unknown as Parameters<CaseStore['reset']>[0]);
    expect(store.getView().children['APIGroup/2']?.APIEndpoint?.map((r) => r.param)).toEqual(['9']);
  });

  it('a card is inside its page and its case; a page or an edgenote inside its case', () => {
    expect(containerKeys(card)).toEqual(['Page/3', 'Case/5']);
    expect(containerKeys(page)).toEqual(['Case/5']);
    expect(containerKeys(note)).toEqual(['Case/5']);
    expect(containerKeys(lockOn('Page', '3', 'infinity'))).toEqual([]);
  });

  it('containerLockOn: a deep page lock covers its cards, a deep case lock everything; a depth-0 lock nothing', () => {
    const store = new CaseStore();
    store.setSchema(schema);
    for (const record of [page, card, note, footnote]) store.upsert(record);
    store.upsert(lockOn('Page', '3', '0'));
    expect(store.getView().containerLockOn).toEqual({});
    store.upsert(lockOn('Page', '3', 'infinity'));
    expect(Object.keys(store.getView().containerLockOn).sort()).toEqual(['Card/12', 'Note/7']);
    store.remove({ type: 'Lock', param: '9' });
    store.upsert(lockOn('Case', '5', 'infinity'));
    expect(Object.keys(store.getView().containerLockOn).sort()).toEqual(['Card/12', 'Edgenote/4', 'Note/7', 'Page/3']);
  });

  it('errors: lock_held lists every lock and each holder once; none_free is NoneFreeError', () => {
    const deep = lockOn('Page', '3', 'infinity');
    const other = { ...deep, param: '10', token: '10', lockable: { type: 'Card', table: 'cards', param: '12' }, depth: '0' as const };
    const held = errorFromResponse(409, { error: { code: 'lock_held', message: 'held', lock: deep, locks: [deep, other] } }, new Headers());
    expect(held).toBeInstanceOf(LockHeldError);
    expect((held as LockHeldError).locks).toHaveLength(2);
    expect((held as LockHeldError).holders.map((u) => u.name)).toEqual(['Alice']);
    const single = errorFromResponse(409, { error: { code: 'lock_held', message: 'held', lock: deep } }, new Headers());
    expect((single as LockHeldError).locks).toEqual([deep]);
    const none = errorFromResponse(409, { error: { code: 'none_free', message: 'all held', locks: [deep] } }, new Headers());
    expect(none).toBeInstanceOf(NoneFreeError);
    expect((none as NoneFreeError).holders.map((u) => u.name)).toEqual(['Alice']);
  });
});
