import { assertType, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  InvalidError,
  KickedError,
  NotFoundError,
  fillPath,
  recordPath,
  type Api,
  type CaseDetail,
  type Lock,
  type Waiter,
  type RouteData,
  type Operation,
} from '../src/index.js';
import { caseFor, person, servers, tabsDisposedAfterEach } from '../../test/support.js';

describe('routes typed from the OpenAPI document', () => {
  it('fills path parameters, encoded', () => {
    expect(fillPath('/cases/{slug}/pages', { slug: 'a b/c' })).toBe('/cases/a%20b%2Fc/pages');
    expect(fillPath('/locks/{id}/refresh', { id: 12 })).toBe('/locks/12/refresh');
    expect(() => fillPath('/cards/{id}', {})).toThrow(TypeError);
    expect(recordPath({ type: 'Card', table: 'cards', param: '7' })).toBe('/cards/7');
    expect(recordPath({ type: 'Case', table: 'cases', param: '3', slug: 'lighthouse' })).toBe('/cases/lighthouse');
    expect(() => recordPath({ type: 'Ticket', param: '1' })).toThrow(InvalidError);
    expect(recordPath({ type: 'BookComponent', table: 'book_components', param: '4' })).toBe('/book_components/4');
  });

  it('types params, bodies and answers from `paths`; what the document does not define does not compile', () => {
    expectTypeOf<RouteData<Operation<'/cases/{slug}', 'get'>>>().toMatchTypeOf<CaseDetail>();
    // a lock, or with `wait` the tab's place in the record's line
    expectTypeOf<RouteData<Operation<'/locks', 'post'>>>().toEqualTypeOf<Lock | Waiter>();
    expectTypeOf<RouteData<Operation<'/locks/{id}', 'delete'>>>().toEqualTypeOf<null>();
    const compileOnly = (api: Api) => {
      // @ts-expect-error a path the document does not have
      assertType(api.call('get', '/nope'));
      // @ts-expect-error a method the path does not have
      assertType(api.call('patch', '/locks'));
      // @ts-expect-error the path parameter is missing
      assertType(api.call('get', '/cases/{slug}'));
      // @ts-expect-error the required query is missing
      assertType(api.call('get', '/locks/status'));
      // @ts-expect-error `lockableType` is one of the document's lockable types
      assertType(api.call('post', '/locks', { body: { lock: { lockableType: 'User', lockableParam: '1' } } }));
      // @ts-expect-error `GET /me` takes no body
      assertType(api.call('get', '/me', { body: {} }));
      // @ts-expect-error `GET /me` takes no If-Match
      assertType(api.call('get', '/me', { ifMatch: 3 }));
      assertType(api.call('patch', '/cards/{id}', { path: { id: '1' }, body: { card: { content: 'x' } }, ifMatch: 2, lockToken: '9' }));
    };
    expect(compileOnly).toBeTypeOf('function');
  });
});

describe.each(servers())('typed routes on $backend', (server) => {
  const client = tabsDisposedAfterEach();

  it('sends path, query, body and the guard headers the document names', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const card = cards[0]!;
    const a = client(server, alice);

    const detail = await a.api.call('get', '/cases/{slug}', { path: { slug: kase.slug } });
    expect(detail.data.pages[0]!.cards.map((c) => c.id)).toEqual(cards.map((c) => c.id));

    const taken = await a.api.call('post', '/locks', { body: { lock: { lockableType: 'Card', lockableParam: card.param } } });
    expect(taken.status).toBe(201);
    expect(taken.data.sessionId).toBe(a.sessionId);
    const lock = taken.data;
    if (lock.type !== 'Lock') throw new Error(`a lock request without wait was answered with a ${lock.type}`);

    const saved = await a.api.call('patch', '/cards/{id}', {
      path: { id: card.param },
      body: { card: { content: 'typed' } },
      ifMatch: card.version,
      lockToken: lock.token,
    });
    expect(saved.data.content).toBe('typed');
    expect(saved.version).toBe(card.version + 1);

    const [latest] = await a.api.lockEvents(kase.slug, { limit: 1 });
    expect(latest).toMatchObject({ action: 'acquired', lockable: { type: 'Card', param: card.param } });

    expect((await a.api.call('delete', '/locks/{id}', { path: { id: lock.token } })).status).toBe(204);
    expect((await a.api.lockStatus(card)).state).toBe('unlocked');
  });

  it('site admins see open tabs and kick one; the demo people are there only with --demo', async () => {
    const alice = await person(server, 'Alice');
    const { kase } = await caseFor(server, alice, []);
    const a = client(server, alice);
    const handle = a.openCase(kase.slug);
    await handle.live.ready();

    const admin = client(server, { ...alice, token: server.adminToken });
    await vi.waitFor(async () => {
      expect((await admin.api.sessions()).map((s) => s.sessionId)).toContain(a.sessionId);
    });
    expect(await admin.api.kick(a.sessionId)).toBeNull();
    await vi.waitFor(() => expect(handle.live.getState().error).toBeInstanceOf(KickedError));

    await expect(a.api.demoPeople()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a type the schema does not declare: the server refuses it, and the kit finds no route for it', async () => {
    const alice = await person(server, 'Alice');
    const a = client(server, alice);
    const error = await a.api.lockStatus({ type: 'User', param: String(alice.user.id) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidError);
    expect((error as InvalidError).status).toBe(422);
    const unread = await a.api.read({ type: 'Ticket', param: '1' }).catch((e: unknown) => e);
    expect(unread).toBeInstanceOf(InvalidError);
    expect((unread as InvalidError).status).toBe(0);
  });
});
