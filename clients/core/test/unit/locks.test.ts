import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, CancelledError, LockHeldError, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, alice, bob, card, caseDetail, deferred, fakeFetch, lockOn, schemaDoc, tokenFor } from './fakes.js';

type Answer = { status: number; body?: unknown };

/** A tab with the demo case open; each `POST /locks` waits for the test to answer it. */
async function tab() {
  FakeSocket.all = [];
  const acquires: ReturnType<typeof deferred<Answer>>[] = [];
  const { fetch, calls } = fakeFetch({
    'GET /schema': () => ({ status: 200, body: schemaDoc }),
    'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
    'POST /locks': () => {
      const answer = deferred<Answer>();
      acquires.push(answer);
      return answer.promise;
    },
    'DELETE /locks': () => ({ status: 204 }),
    'POST /locks/*': (call) => ({ status: 200, body: lockOn(target, Number(call.path.split('/')[2])) }),
    'DELETE /locks/*': () => ({ status: 204 }),
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
  const releases = () => calls.filter((c) => c.method === 'DELETE' && c.path !== '/locks').map((c) => c.path);
  const refreshes = () => calls.filter((c) => c.method === 'POST' && c.path.endsWith('/refresh')).length;
  return { client, live, acquires, releases, refreshes };
}

const flush = () => vi.advanceTimersByTimeAsync(0);
const target = card(11, 1);

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('an acquire in flight loses to a release', () => {
  it('the lock it returns is released on the server, never adopted', async () => {
    const { client, live, acquires, releases } = await tab();
    const acquiring = client.locks.acquire(target);
    const outcome = acquiring.then(
      () => 'adopted',
      (e: unknown) => e,
    );
    await flush();
    expect(client.locks.isPending(target)).toBe(true);
    const released = client.locks.release(target);
    // the server grants it after the tab let go
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 77) });
    await released;
    expect(await outcome).toBeInstanceOf(CancelledError);
    expect(releases()).toEqual(['/locks/77']);
    expect(client.locks.info(target).state).toBe('unlocked');
    expect(client.locks.tokenFor(target)).toBeNull();
    expect(live.getState().lockOn['Card/11']).toBeUndefined();
  });

  it('a newer acquire of the same record keeps the lock: nothing is released, the newer one adopts it', async () => {
    const { client, acquires, releases } = await tab();
    const first = client.locks.acquire(target).catch((e: unknown) => e);
    await flush();
    void client.locks.release(target);
    const second = client.locks.acquire(target);
    await flush();
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 78) });
    acquires[1]!.resolve({ status: 200, body: lockOn(target, 78) });
    expect(await first).toBeInstanceOf(CancelledError);
    expect((await second).token).toBe('78');
    expect(releases()).toEqual([]);
    expect(client.locks.info(target).state).toBe('owned');
  });

  it('a refused acquire that was cancelled releases nothing', async () => {
    const { client, acquires, releases } = await tab();
    const acquiring = client.locks.acquire(target).catch((e: unknown) => e);
    await flush();
    const released = client.locks.release(target);
    const held = lockOn(target, 79, bob, 'tab-b');
    acquires[0]!.resolve({ status: 409, body: { error: { code: 'lock_held', message: 'Bob is editing', lock: held } } });
    await released;
    expect(await acquiring).toBeInstanceOf(LockHeldError);
    expect(releases()).toEqual([]);
  });

  it('releasing every lock (leaving the page) cancels acquires in flight', async () => {
    const { client, acquires, releases } = await tab();
    const acquiring = client.locks.acquire(target).catch((e: unknown) => e);
    await flush();
    await client.locks.releaseAll();
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 81) });
    expect(await acquiring).toBeInstanceOf(CancelledError);
    await flush();
    expect(releases()).toContain('/locks/81');
    expect(client.locks.info(target).state).toBe('unlocked');
  });

  it('an acquire answered in time is adopted as before', async () => {
    const { client, acquires } = await tab();
    const acquiring = client.locks.acquire(target);
    await flush();
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 82, alice) });
    expect((await acquiring).token).toBe('82');
    expect(client.locks.info(target).state).toBe('owned');
  });
});

describe('a tab is its user and its session id', () => {
  it('a lock with this tab’s session id but another user is not this tab’s', async () => {
    const { client, live } = await tab();
    FakeSocket.last.frame({ type: 'create', watchable: lockOn(target, 90, bob, SESSION), editorSessionId: SESSION, editorUserId: bob.id });
    expect(live.getState().lockOn['Card/11']?.token).toBe('90');
    expect(client.locks.info(target).state).toBe('locked');
  });
});

describe('typing is activity', () => {
  it('renews the lock at most once a minute, and only after input since the last renewal', async () => {
    const { client, acquires, refreshes } = await tab();
    const acquiring = client.locks.acquire(target);
    await flush();
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 83) });
    await acquiring;
    // typing in the first minute: one renewal, when the minute is up
    client.locks.touch(target);
    await vi.advanceTimersByTimeAsync(30_000);
    client.locks.touch(target);
    client.locks.touch(target);
    expect(refreshes()).toBe(0);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(refreshes()).toBe(1);
    // no input since: nothing, however long
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(refreshes()).toBe(1);
    // input after a quiet spell: at once
    client.locks.touch(target);
    await flush();
    expect(refreshes()).toBe(2);
    // released: typing renews nothing
    await client.locks.release(target);
    client.locks.touch(target);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(refreshes()).toBe(2);
  });
});
