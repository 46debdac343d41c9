import { describe, expect, it, vi } from 'vitest';
import { InvalidError, LockHeldError, LockedError, NoneFreeError, type Lock } from '../src/index.js';
import { caseFor, person, rest, servers, tabsDisposedAfterEach, type Card, type Page } from '../../test/support.js';

const status = (server: Parameters<typeof rest>[0], token: string, record: { type: string; param: string }) =>
  rest<{ state: string; lock?: Lock }>(server, token, 'GET', `/locks/status?lockableType=${record.type}&lockableParam=${record.param}`);

describe.each(servers())('lock sets, claims, deep locks and moves on $backend', (server) => {
  const client = tabsDisposedAfterEach();

  it('lockMany takes every lock or none, and a refusal names every holder in the way', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const { cards } = await caseFor(server, alice, [bob, carol], 4);
    const [c0, c1, c2, c3] = cards as [Card, Card, Card, Card];
    const a = client(server, alice);
    const b = client(server, bob);
    const c = client(server, carol);

    const locks = await a.locks.lockMany([c1, c0]);
    expect(locks.map((l) => l.lockable.param)).toEqual([c1.param, c0.param]);
    expect(locks.every((l) => l.depth === '0' && l.sessionId === a.sessionId)).toBe(true);
    expect(a.locks.info(c0).state).toBe('owned');
    expect(a.locks.info(c1).state).toBe('owned');
    // asked again with one more record: the held ones are renewed and included
    const again = await a.locks.lockMany([c0, c1, c2]);
    expect(again.map((l) => l.token).slice(0, 2)).toEqual([locks[1]!.token, locks[0]!.token]);
    await a.locks.release(c2);

    await b.locks.acquire(c3);
    const refused = await c.locks.lockMany([c2, c3, c0, c1]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockHeldError);
    const held = refused as LockHeldError;
    expect(held.status).toBe(409);
    expect(held.locks.map((l) => l.lockable.param).sort()).toEqual([c0.param, c1.param, c3.param].sort());
    expect(held.holders.map((u) => u.name).sort()).toEqual(['Alice', 'Bob']);
    // nothing was taken: the free card is still free
    expect((await status(server, carol.token, c2)).data.state).toBe('unlocked');
    expect(c.locks.info(c2).state).toBe('unlocked');
    // the refusal taught carol's tab who holds what
    expect(c.locks.info(c3)).toMatchObject({ state: 'locked', holder: { name: 'Bob' } });

    // a record named twice counts once: its lock appears at each place it was named
    const twice = await a.locks.lockMany([c2, c2]);
    expect(twice.map((l) => l.lockable.param)).toEqual([c2.param, c2.param]);
    expect(twice[0]!.token).toBe(twice[1]!.token);
  });

  it('claim takes the first free candidate; a retried claim gets the same record; none free is NoneFreeError', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const { cards } = await caseFor(server, alice, [bob, carol], 3);
    const [c0, c1, c2] = cards as [Card, Card, Card];
    const a = client(server, alice);
    const b = client(server, bob);
    const c = client(server, carol);

    await a.locks.acquire(c0);
    const first = await b.api.claim([c0, c1, c2]);
    expect(first.status).toBe(201);
    expect(first.data.lockable.param).toBe(c1.param);
    const retried = await b.locks.claim([c0, c1, c2]);
    expect(retried.token).toBe(first.data.token);
    expect(b.locks.info(c1).state).toBe('owned');

    const third = await c.locks.claim([c0, c1, c2]);
    expect(third.lockable.param).toBe(c2.param);

    const none = await client(server, carol).locks.claim([c0, c1, c2]).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(NoneFreeError);
    expect((none as NoneFreeError).status).toBe(409);
    expect((none as NoneFreeError).locks).toHaveLength(3);
    expect((none as NoneFreeError).holders.map((u) => u.name).sort()).toEqual(['Alice', 'Bob', 'Carol']);
  });

  it('a deep page lock covers its cards: others read them as held, cannot lock them (409) nor write them (423)', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, page, cards } = await caseFor(server, alice, [bob], 2);
    const card = cards[0]!;
    const a = client(server, alice);
    const b = client(server, bob);
    const open = b.openCase(kase.slug);
    await vi.waitFor(() => expect(open.live.getState().status).toBe('live'));

    const deep = await a.locks.acquire(page, { depth: 'infinity' });
    expect(deep).toMatchObject({ depth: 'infinity', lockable: { type: 'Page', param: page.param } });

    // bob's open case shows the page's lock on the card inside
    await vi.waitFor(() => expect(b.locks.info(card)).toMatchObject({ state: 'locked', holder: { name: 'Alice' } }));
    expect(b.locks.info(card).containerLock?.token).toBe(deep.token);
    expect(b.locks.info(card).lock?.lockable).toMatchObject({ type: 'Page', param: page.param });
    expect(open.live.getState().containerLockOn[`Card/${card.param}`]?.token).toBe(deep.token);
    // alice's own deep lock lets her work inside
    expect(a.locks.info(card)).toMatchObject({ state: 'unlocked', containerLock: null });

    const held = await b.locks.acquire(card).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(LockHeldError);
    expect((held as LockHeldError).lock.token).toBe(deep.token);

    const locked = await b.save(card, { content: 'Bob inside' }).catch((e: unknown) => e);
    expect(locked).toBeInstanceOf(LockedError);
    expect((locked as LockedError).status).toBe(423);
    expect((locked as LockedError).lock.token).toBe(deep.token);
    expect((locked as LockedError).lockable).toMatchObject({ type: 'Page', param: page.param });
    await expect(b.create('Card', page, { content: 'new inside' })).rejects.toBeInstanceOf(LockedError);

    // the holder's tab writes inside
    const saved = await a.save(card, { content: 'Alice restructures' });
    expect(saved.content).toBe('Alice restructures');

    // released: the card is free for bob again
    await a.locks.release(page);
    await vi.waitFor(() => expect(b.locks.info(card)).toMatchObject({ state: 'unlocked', containerLock: null }));
  });

  it('a deep lock is refused while someone holds a card inside, naming every holder', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const { page, cards } = await caseFor(server, alice, [bob, carol], 2);
    const b = client(server, bob);
    const c = client(server, carol);
    await b.locks.acquire(cards[0]!);
    await c.locks.acquire(cards[1]!);
    const refused = await client(server, alice).locks.acquire(page, { depth: 'infinity' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockHeldError);
    expect((refused as LockHeldError).holders.map((u) => u.name).sort()).toEqual(['Bob', 'Carol']);
    await expect(b.locks.acquire(cards[0]!, { depth: 'infinity' })).rejects.toBeInstanceOf(InvalidError);
  });

  it('move puts a card on another page under its lock; the others see it there at once', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, page, cards } = await caseFor(server, alice, [bob], 2);
    const other = (await rest<Page>(server, alice.token, 'POST', `/cases/${kase.slug}/pages`, { page: { title: 'Second page' } })).data;
    const a = client(server, alice);
    const b = client(server, bob);
    const open = a.openCase(kase.slug);
    await vi.waitFor(() => expect(open.live.getState().status).toBe('live'));
    const card = cards[0]!;

    await b.locks.acquire(card);
    const moved = await b.move(card, { parentId: other.id, position: 0 });
    expect(moved).toMatchObject({ pageId: other.id, position: 0, version: card.version + 1 });
    await b.locks.release(card);
    await vi.waitFor(() => {
      const { children } = open.live.getState();
      expect(children[`Page/${other.id}`]?.Card?.map((c) => c.param)).toEqual([card.param]);
      expect(children[`Page/${page.id}`]?.Card?.map((c) => c.param)).toEqual([cards[1]!.param]);
    });

    // a page alice holds deeply refuses the move in (423, naming her lock), and the card stays
    await a.locks.acquire(page, { depth: 'infinity' });
    const refused = await b.move(moved, { parentId: page.id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).holder.name).toBe('Alice');
    expect((refused as LockedError).lockable).toMatchObject({ type: 'Page', param: page.param });
    const now = await rest<Card>(server, bob.token, 'GET', `/cards/${card.param}`);
    expect(now.data.pageId).toBe(other.id);
  });
});
