/**
 * The tab's locks have one truth (fakes and fake timers): a release during a
 * resync is never adopted from the older snapshot, a release that fails on
 * the network is tried again until baton confirms it, an acquire whose
 * answer is lost is settled with `GET /locks/status`, and every REST call
 * has a timeout, so Cancel never waits on a hung request.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, CancelledError, TimeoutError, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, connectionLost, deferred, fakeFetch, lockOn, never, schemaDoc, tokenFor, type Call } from './fakes.js';

type Answer = { status: number; body?: unknown };
type Route = (call: Call) => Answer | Promise<Answer>;

const target = card(11, 1);
const flush = () => vi.advanceTimersByTimeAsync(0);

/** A tab with the demo case open on a fake baton; `routes` override the defaults. */
async function tab(routes: Record<string, Route> = {}) {
  FakeSocket.all = [];
  const { fetch, calls } = fakeFetch({
    'GET /schema': () => ({ status: 200, body: schemaDoc }),
    'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
    'POST /locks': () => ({ status: 201, body: lockOn(target, 77) }),
    'DELETE /locks/*': () => ({ status: 204 }),
    'GET /locks/status': () => ({ status: 200, body: { state: 'unlocked', waiters: [] } }),
    ...routes,
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
    backoff: { initialDelay: 100, maxDelay: 1000 },
  });
  const { live } = client.openCase('demo');
  FakeSocket.last.welcome();
  await flush();
  const deletes = () => calls.filter((c) => c.method === 'DELETE').map((c) => c.path);
  return { client, live, calls, deletes };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('a release during a resync', () => {
  it('is never adopted again from the snapshot taken before it', async () => {
    const snapshot = deferred<Answer>();
    let asked = 0;
    const { client, live } = await tab({
      'GET /cases/demo': () => (++asked === 1 ? { status: 200, body: caseDetail() } : snapshot.promise),
    });
    await client.locks.acquire(target);
    expect(client.locks.info(target).state).toBe('owned');
    // a resync starts: baton answers with the lock still there, but the answer is slow
    FakeSocket.last.frame({ type: 'resync' });
    await flush();
    // meanwhile the person cancels: the release is confirmed
    await client.locks.release(target);
    expect(client.locks.info(target).state).toBe('unlocked');
    snapshot.resolve({ status: 200, body: { ...caseDetail(), activeLocks: [lockOn(target, 77)] } });
    await flush();
    expect(client.locks.info(target).state).toBe('unlocked');
    expect(client.locks.tokenFor(target)).toBeNull();
    expect(live.getState().lockOn['Card/11']).toBeUndefined();
    client.dispose();
  });
});

describe('a release that fails on the network', () => {
  it('is tried again, with backoff, until baton confirms it', async () => {
    let tries = 0;
    const { client, deletes } = await tab({
      'DELETE /locks/*': () => (++tries < 3 ? connectionLost() : { status: 204 }),
    });
    await client.locks.acquire(target);
    // Cancel: the form closes at once; the release resolves although the network failed
    await client.locks.release(target);
    expect(client.locks.info(target).state).toBe('unlocked');
    expect(deletes()).toEqual(['/locks/77']);
    expect(client.locks.unconfirmed).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(deletes()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(deletes()).toEqual(['/locks/77', '/locks/77', '/locks/77']);
    expect(client.locks.unconfirmed).toBe(0);
    await client.locks.settled();
    // confirmed: nothing more is sent
    await vi.advanceTimersByTimeAsync(10_000);
    expect(deletes()).toHaveLength(3);
    client.dispose();
  });
});

describe('an acquire whose answer is lost', () => {
  it('is settled by GET /locks/status: a lock baton granted is adopted when the tab still wants it', async () => {
    const { client, calls } = await tab({
      'POST /locks': () => connectionLost(),
      'GET /locks/status': () => ({ status: 200, body: { state: 'owned', lock: lockOn(target, 88), waiters: [] } }),
    });
    const lock = await client.locks.acquire(target);
    expect(lock.token).toBe('88');
    expect(client.locks.info(target).state).toBe('owned');
    expect(client.locks.tokenFor(target)).toBe('88');
    expect(calls.find((c) => c.path === '/locks/status')?.query).toMatchObject({ lockableType: 'Card', lockableParam: '11' });
    client.dispose();
  });

  it('released when the tab let go meanwhile, never left held and invisible', async () => {
    const answer = deferred<Answer>();
    const { client, deletes } = await tab({
      'POST /locks': () => answer.promise,
      'GET /locks/status': () => ({ status: 200, body: { state: 'owned', lock: lockOn(target, 89), waiters: [] } }),
    });
    const acquiring = client.locks.acquire(target).catch((e: unknown) => e);
    await flush();
    await client.locks.release(target);
    // baton granted it, but the answer never arrives
    answer.reject(new TypeError('fetch failed'));
    expect(await acquiring).toBeInstanceOf(CancelledError);
    await flush();
    expect(deletes()).toEqual(['/locks/89']);
    expect(client.locks.info(target).state).toBe('unlocked');
    client.dispose();
  });

  it('when baton cannot be asked either, a lock of the tab found later is released, not adopted', async () => {
    let reachable = false;
    let detail = caseDetail();
    const { client, live, deletes } = await tab({
      'POST /locks': () => connectionLost(),
      'GET /locks/status': () =>
        reachable ? { status: 200, body: { state: 'owned', lock: lockOn(target, 90), waiters: [] } } : connectionLost(),
      'GET /cases/demo': () => ({ status: 200, body: detail }),
    });
    expect(await client.locks.acquire(target).catch((e: unknown) => e)).toBeInstanceOf(Error);
    expect(client.locks.info(target).state).toBe('unlocked');
    // the network comes back; a snapshot shows the lock the lost answer was about
    reachable = true;
    detail = { ...caseDetail(), activeLocks: [lockOn(target, 90)] } as typeof detail;
    void live.refetch();
    await flush();
    expect(client.locks.info(target).state).toBe('unlocked');
    expect(deletes()).toContain('/locks/90');
    client.dispose();
  });
});

describe('every REST call has a timeout', () => {
  it('a request without an answer fails with TimeoutError after 10 s', async () => {
    const { client } = await tab({ 'GET /me': () => never() });
    const asking = client.api.me().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(9_999);
    let settled = false;
    void asking.then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await asking;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).code).toBe('timeout');
    client.dispose();
  });

  it('Cancel never waits on a hung acquire, and Edit can start again meanwhile', async () => {
    let first = true;
    const { client } = await tab({
      'POST /locks': () => {
        if (!first) return { status: 201, body: lockOn(target, 92) };
        first = false;
        return never();
      },
    });
    const hung = client.locks.acquire(target).catch((e: unknown) => e);
    await flush();
    let released = false;
    void client.locks.release(target).then(() => (released = true));
    await flush();
    expect(released).toBe(true);
    expect(client.locks.info(target).state).toBe('unlocked');
    // Edit again while the first request still hangs
    expect((await client.locks.acquire(target)).token).toBe('92');
    expect(client.locks.info(target).state).toBe('owned');
    // the hung one gives up in time and is cancelled; the newer lock stays
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await hung).toBeInstanceOf(CancelledError);
    expect(client.locks.info(target).state).toBe('owned');
    client.dispose();
  });
});
