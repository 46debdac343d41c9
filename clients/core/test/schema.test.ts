/**
 * The kit on schemas other than the default: it learns the types from
 * `GET /schema` and locks, waits, moves and nests records of any declared
 * type (examples/schemas/kanban.toml and book.toml, on both databases).
 */
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { InvalidError, LockHeldError, LockedError, OutrankedError, type AnyRecord, type BatonClient, type Case } from '../src/index.js';
import { person, rest, schemaServers, tabsDisposedAfterEach, unique, type Person, type ServerInfo } from '../../test/support.js';

type Column = AnyRecord & { type: 'Column'; title: string; position: number };
type Card = AnyRecord & { type: 'Card'; columnId: number; content: string; color: 'none' | 'red' | 'green' | 'blue'; position: number };
type Kanban = { Column: Column; Card: Card };

/** A case of `owner` with `editors` as editors. */
async function board(server: ServerInfo, owner: Person, editors: Person[]): Promise<Case> {
  const slug = unique('board');
  const kase = (await rest<Case>(server, owner.token, 'POST', '/cases', { case: { slug, title: `Board ${slug}` } })).data;
  for (const editor of editors) {
    await rest(server, owner.token, 'POST', `/cases/${slug}/memberships`, { membership: { email: editor.email, role: 'editor' } });
  }
  return kase;
}

describe.each(schemaServers('kanban'))('the kanban schema on $backend', (server) => {
  const tab = tabsDisposedAfterEach();

  it('learns the types from /schema, creates and nests records, moves a card under its lock, and locks a column deeply', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const kase = await board(server, alice, [bob]);
    const a = tab(server, alice);
    const b = tab(server, bob);

    const schema = await a.schema();
    expect(schema.types.map((t) => t.name)).toEqual(['Column', 'Card']);
    expect(schema.parentKey('Card')).toBe('columnId');
    expect(schema.type('Card')?.lock).toMatchObject({ lease: '2m', takeover: 'manager', wait: false });

    // the record map types what `create` takes and gives (a team generates it from its /openapi.json: see readme-typed.test.ts)
    const typed: BatonClient<Kanban> = tab(server, alice);
    const todo = await typed.create('Column', kase, { title: 'To do' });
    const done = await typed.create('Column', kase, { title: 'Done' });
    const card = await typed.create('Card', todo, { content: 'Write the copy', color: 'red' });
    expect(card).toMatchObject({ type: 'Card', table: 'cards', columnId: todo.id, position: 0, color: 'red' });
    expectTypeOf(card.color).toEqualTypeOf<'none' | 'red' | 'green' | 'blue'>();
    const typeOnly = () => {
      // @ts-expect-error `purple` is not a color of the kanban schema's cards
      void typed.create('Card', todo, { color: 'purple' });
      // @ts-expect-error the kanban schema declares no `Page`
      void typed.create('Page', kase, {});
    };
    void typeOnly;

    const watching = b.openCase(kase.slug);
    await watching.live.ready();
    await vi.waitFor(() => {
      const state = watching.live.getState();
      expect(state.children[`Case/${kase.id}`]?.Column?.map((c) => c.title)).toEqual(['To do', 'Done']);
      expect(state.children[`Column/${todo.id}`]?.Card?.map((c) => c.param)).toEqual([card.param]);
    });

    // a move: the card's lock, then PATCH /cards/:id {card: {columnId, position}}; Bob sees it in the other column
    await a.locks.acquire(card);
    const moved = await a.move(card, { parentId: done.id, position: 0 });
    expect(moved).toMatchObject({ columnId: done.id, position: 0, version: card.version + 1 });
    await a.locks.release(card);
    await vi.waitFor(() => {
      const { children } = watching.live.getState();
      expect(children[`Column/${done.id}`]?.Card?.map((c) => c.param)).toEqual([card.param]);
      expect(children[`Column/${todo.id}`]?.Card ?? []).toEqual([]);
    });

    // Bob locks the Done column deeply: the card inside is his for Alice's open case too
    const seen = a.openCase(kase.slug);
    await seen.live.ready();
    const deep = await b.locks.acquire(done, { depth: 'infinity' });
    expect(deep).toMatchObject({ depth: 'infinity', lockable: { type: 'Column', param: done.param } });
    await vi.waitFor(() => expect(seen.live.getState().containerLockOn[`Card/${card.param}`]?.token).toBe(deep.token));
    expect(a.locks.info(moved).state).toBe('locked');
    const refused = await a.save(moved, { content: 'inside a deep lock' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).lockable).toMatchObject({ type: 'Column', param: done.param });
    const inside = await a.create('Card', done, { content: 'new inside' }).catch((e: unknown) => e);
    expect(inside).toBeInstanceOf(LockedError);
    await b.locks.release(done);

    // the type's lock policy: no waiting lines on cards, and "Edit anyway" for managers only
    await b.locks.acquire(moved);
    const wait = await a.locks.wait(moved).catch((e: unknown) => e);
    expect(wait).toBeInstanceOf(InvalidError);
    expect((wait as InvalidError).status).toBe(422);
    await a.locks.editAnyway(moved);
    expect(a.locks.info(moved).state).toBe('owned');
    const outranked = await b.locks.editAnyway(moved).catch((e: unknown) => e);
    expect(outranked).toBeInstanceOf(OutrankedError);
    await a.locks.release(moved);

    // a set of locks over two types, all or nothing
    await b.locks.acquire(todo);
    const set = await a.locks.lockMany([done, moved, todo]).catch((e: unknown) => e);
    expect(set).toBeInstanceOf(LockHeldError);
    expect(a.locks.info(done).state).toBe('unlocked');
    await b.locks.release(todo);
    expect(await a.locks.lockMany([done, moved, todo])).toHaveLength(3);
    watching.close();
    seen.close();
  });
});

describe.each(schemaServers('book'))('the book schema on $backend', (server) => {
  const tab = tabsDisposedAfterEach();

  it('deleting a division takes its components out of every open case; a deep lock on a division covers its components', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const kase = await board(server, alice, [bob]);
    const a = tab(server, alice);
    const b = tab(server, bob);
    const front = await a.create('Division', kase, { title: 'Front matter', kind: 'front' });
    const body = await a.create('Division', kase, { title: 'Body' });
    const preface = await a.create('BookComponent', front, { title: 'Preface', dueOn: '2026-12-01' });
    const chapter = await a.create('BookComponent', body, { title: 'Chapter 1' });
    expect(preface).toMatchObject({ divisionId: front.id, status: 'draft', dueOn: '2026-12-01', source: null });

    const open = b.openCase(kase.slug);
    await open.live.ready();
    expect(open.live.getState().children[`Division/${front.id}`]?.BookComponent?.map((c) => c.param)).toEqual([preface.param]);

    const deep = await a.locks.acquire(body, { depth: 'infinity' });
    await vi.waitFor(() => expect(open.live.getState().containerLockOn[`BookComponent/${chapter.param}`]?.token).toBe(deep.token));
    expect(b.locks.info(chapter)).toMatchObject({ state: 'locked', holder: { name: 'Alice' } });
    await a.locks.release(body);
    await vi.waitFor(() => expect(open.live.getState().containerLockOn).toEqual({}));

    await a.destroy(front);
    await vi.waitFor(() => {
      const state = open.live.getState();
      expect(state.records.Division?.map((d) => d.param)).toEqual([body.param]);
      expect(state.records.BookComponent?.map((c) => c.param)).toEqual([chapter.param]);
    });
    open.close();
  });
});

describe.each(schemaServers('api'))('a type named with an acronym (examples/schemas/api.toml) on $backend', (server) => {
  const tab = tabsDisposedAfterEach();

  it('takes bodyKey, parentKey and nestKey from /schema: APIEndpoint is created, saved, nested and moved', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const kase = await board(server, alice, [bob]);
    const a = tab(server, alice);
    const b = tab(server, bob);

    const schema = await a.schema();
    expect(schema.bodyKey('APIEndpoint')).toBe('apiEndpoint');
    expect(schema.parentKey('APIEndpoint')).toBe('serviceId');
    expect(schema.nestKey('APIEndpoint')).toBe('apiEndpoints');
    expect(schema.type('APIEndpoint')?.plural).toBe('api_endpoints');

    const orders = await a.create('Service', kase, { name: 'Orders' });
    const tides = await a.create('Service', kase, { name: 'Tides' });
    const endpoint = await a.create('APIEndpoint', orders, { path: '/v1/orders', rateLimit: 60, public: true });
    expect(endpoint).toMatchObject({ type: 'APIEndpoint', table: 'api_endpoints', serviceId: orders.id, method: 'GET', rateLimit: 60, public: true });

    const open = b.openCase(kase.slug);
    await open.live.ready();
    expect(open.live.getState().children[`Service/${orders.id}`]?.APIEndpoint?.map((e) => e.param)).toEqual([endpoint.param]);

    // a save nests the fields under the server's body key (the old derivation, `aPIEndpoint`, was refused with 422)
    await a.locks.acquire(endpoint);
    const saved = await a.save(endpoint, { method: 'POST', notes: 'Idempotent.' });
    expect(saved).toMatchObject({ method: 'POST', notes: 'Idempotent.', version: 2 });
    const moved = await a.move(saved, { parentId: tides.id });
    expect(moved).toMatchObject({ serviceId: tides.id });
    await a.locks.release(endpoint);
    await vi.waitFor(() => {
      const state = open.live.getState();
      expect(state.children[`Service/${tides.id}`]?.APIEndpoint?.map((e) => e.method)).toEqual(['POST']);
      expect(state.children[`Service/${orders.id}`]?.APIEndpoint ?? []).toEqual([]);
    });
    open.close();
  });
});
