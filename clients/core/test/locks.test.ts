import { describe, expect, it, vi } from 'vitest';
import {
  LockHeldError,
  LockLostError,
  LockedError,
  StaleVersionError,
} from '../src/index.js';
import { MemoryStorage, caseFor, person, rest, servers, tabsDisposedAfterEach, type Card } from '../../test/support.js';

describe.each(servers())('locks on $backend', (server) => {
  const client = tabsDisposedAfterEach();

  it('sends the tab session id: the lock names it, and DELETE /locks?session=mine releases it', async () => {
    const alice = await person(server, 'Alice');
    const { cards } = await caseFor(server, alice, []);
    const storage = new MemoryStorage();
    const a = client(server, alice, storage);
    expect(a.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // a reload of the same tab keeps its id
    expect(client(server, alice, storage).sessionId).toBe(a.sessionId);
    expect(client(server, alice).sessionId).not.toBe(a.sessionId);

    const lock = await a.locks.acquire(cards[0]!);
    expect(lock.sessionId).toBe(a.sessionId);
    expect(lock.lockable).toMatchObject({ type: 'Card', param: cards[0]!.param });
    expect(a.locks.info(cards[0]!).state).toBe('owned');
    // acquiring again from the same tab renews the same lock
    expect((await a.locks.acquire(cards[0]!)).token).toBe(lock.token);

    await a.locks.releaseAll();
    const status = await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${cards[0]!.param}`);
    expect(status.data.state).toBe('unlocked');
    expect(a.locks.info(cards[0]!).state).toBe('unlocked');
  });

  it('another user gets LockHeld on acquire and Locked on save', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const fixture = await caseFor(server, alice, [bob]);
    const card = fixture.cards[0]!;
    const a = client(server, alice);
    const b = client(server, bob);
    const { kase } = fixture;
    const open = b.openCase(kase.slug);
    await vi.waitFor(() => expect(open.live.getState().status).toBe('live'));
    await a.locks.acquire(card);

    const held = await b.locks.acquire(card).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(LockHeldError);
    expect((held as LockHeldError).status).toBe(409);
    expect((held as LockHeldError).holder.name).toBe('Alice');
    expect((held as LockHeldError).lock.lockable).toMatchObject({ type: 'Card', param: card.param });
    expect(b.locks.info(card)).toMatchObject({ state: 'locked', holder: { name: 'Alice' } });

    const locked = await b.save(card, { content: 'Bob was here' }).catch((e: unknown) => e);
    expect(locked).toBeInstanceOf(LockedError);
    expect((locked as LockedError).status).toBe(423);
    expect((locked as LockedError).holder.name).toBe('Alice');

    // the holder saves with If-Match and Lock-Token
    const saved = await a.save(card, { content: 'Alice edits' });
    expect(saved).toMatchObject({ content: 'Alice edits', version: card.version + 1 });
  });

  it('another tab of the same user is someone else too', async () => {
    const alice = await person(server, 'Alice');
    const { cards } = await caseFor(server, alice, []);
    const tab1 = client(server, alice);
    const tab2 = client(server, alice);
    await tab1.locks.acquire(cards[0]!);
    await expect(tab2.locks.acquire(cards[0]!)).rejects.toBeInstanceOf(LockHeldError);
    await expect(tab2.save(cards[0]!, { content: 'from tab 2' })).rejects.toBeInstanceOf(LockedError);
    // "Edit anyway" between two tabs of one user is allowed (equal rank)
    const taken = await tab2.locks.editAnyway(cards[0]!);
    expect(taken.sessionId).toBe(tab2.sessionId);
  });

  it('a save from a version the tab did not see is StaleVersion with the current record', async () => {
    const alice = await person(server, 'Alice');
    const { cards } = await caseFor(server, alice, []);
    const a = client(server, alice);
    const card = cards[0]!;
    await a.save(card, { content: 'first' });
    const stale = await a.save(card, { content: 'from the old version' }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(StaleVersionError);
    expect((stale as StaleVersionError).status).toBe(412);
    expect((stale as StaleVersionError).current).toMatchObject({ content: 'first', version: card.version + 1 });
  });

  it('takeover: the former holder is told it lost the lock to the taker, and its old token cannot write', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, await person(server, 'Owner'), [alice, bob]);
    const card = cards[0]!;
    const a = client(server, alice);
    const b = client(server, bob);
    const liveA = a.openCase(kase.slug);
    await vi.waitFor(() => expect(liveA.live.getState().status).toBe('live'));
    const oldToken = await a.locks.acquire(card);

    const lock = await b.locks.editAnyway(card);
    expect(lock.user.name).toBe('Bob');
    expect(b.locks.info(card).state).toBe('owned');
    await b.save(card, { content: 'Bob took over' });

    // alice's tab learns it over the channel
    await vi.waitFor(() =>
      expect(a.locks.info(card)).toMatchObject({ state: 'lost', lostTo: { name: 'Bob' }, lostReason: 'overridden' }),
    );
    // alice's tab still sends its old token: refused while bob holds the lock (423)…
    expect(a.locks.tokenFor(card)).toBe(oldToken.token);
    await expect(a.save(card, { content: 'Alice overwrites' })).rejects.toBeInstanceOf(LockedError);
    // …and after bob stopped editing (412 lock_lost), even with the newest version
    await b.locks.release(card);
    const newest = await rest<Card>(server, alice.token, 'GET', `/cards/${card.param}`);
    const error = await a.save(newest.data, { content: 'Alice overwrites' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).status).toBe(412);
    expect((error as LockLostError).current).toMatchObject({ content: 'Bob took over' });
    const current = await rest<Card>(server, alice.token, 'GET', `/cards/${card.param}`);
    expect(current.data.content).toBe('Bob took over');
  });

  it("a save with a lost lock's token is LockLost (412) even after the taker released", async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { cards } = await caseFor(server, await person(server, 'Owner'), [alice, bob]);
    const card = cards[0]!;
    const a = client(server, alice);
    const b = client(server, bob);
    await a.locks.acquire(card);
    await b.locks.editAnyway(card);
    const saved = await b.save(card, { content: 'Bob wins' });
    await b.locks.release(card);

    // alice's tab has no channel open: it still believes it holds the lock and sends its token
    expect(a.locks.info(card).state).toBe('owned');
    const error = await a.save(saved, { content: 'Alice, stale' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).status).toBe(412);
    expect((error as LockLostError).current).toMatchObject({ content: 'Bob wins' });
    expect(a.locks.info(card).state).toBe('lost');
    // releasing clears the loss: the next save goes without a token
    await a.locks.release(card);
    expect(a.locks.tokenFor(card)).toBeNull();

    const current = await rest<Card>(server, alice.token, 'GET', `/cards/${card.param}`);
    expect(current.data.content).toBe('Bob wins');
  });
});
