/**
 * `getToken()`: a fresh token after a 401 (the request tried once more),
 * before every reconnect of a channel, shortly before the token's `exp`,
 * and after `kicked` with reason `signed_out` — the tab carries on with its
 * locks and its channel. Without it, the kit stops as before.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, KickedError, type TokenRequest, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, deferred, fakeFetch, lockOn, schemaDoc } from './fakes.js';

/** A token for user 1 with `exp` (and `iat`) in seconds, as the kit reads it (nothing checks the signature here). */
const token = (name: string, exp?: number, iat?: number) =>
  `e30.${Buffer.from(JSON.stringify({ sub: String(ME), name, ...(exp ? { exp, iat } : {}) })).toString('base64url')}.sig`;
const tokenIn = (url: string) => new URL(url).searchParams.get('token');
const target = card(11, 1);
const flush = () => vi.advanceTimersByTimeAsync(0);

async function tab(first: string, getToken?: (request: TokenRequest) => string | null | Promise<string | null>) {
  FakeSocket.all = [];
  let valid = first;
  // baton's side: the locks it holds
  const held: ReturnType<typeof lockOn>[] = [];
  const { fetch, calls } = fakeFetch({
    'GET /schema': () => ({ status: 200, body: schemaDoc }),
    'GET /cases/demo': () => ({ status: 200, body: { ...caseDetail(), activeLocks: held } }),
    'GET /me': (call) =>
      call.headers.authorization === `Bearer ${valid}`
        ? { status: 200, body: { type: 'User', table: 'users', param: '1', id: ME, name: 'Alice', color: '#e6194b', kind: 'person' } }
        : { status: 401, body: { error: { code: 'unauthorized', message: 'expired' } } },
    'POST /locks': () => {
      held.push(lockOn(target, 77));
      return { status: 201, body: lockOn(target, 77) };
    },
    'DELETE /locks/*': () => ({ status: 204 }),
  });
  const client = new BatonClient({
    baseUrl: 'http://baton.test',
    fetch,
    WebSocket: FakeSocket as unknown as WebSocketConstructor,
    storage: new MemoryStorage(),
    sessionId: SESSION,
    token: first,
    releaseOnPageHide: false,
    askBeforeUnload: false,
    signals: {},
    backoff: { initialDelay: 100, maxDelay: 100 },
    ...(getToken ? { getToken } : {}),
  });
  const authErrors: Error[] = [];
  client.onAuthError((e) => authErrors.push(e));
  const { live } = client.openCase('demo');
  FakeSocket.last.welcome();
  await flush();
  /** baton now takes only `next` (the current token has ended). */
  const accept = (next: string) => (valid = next);
  return { client, live, calls, authErrors, accept };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('a 401', () => {
  it('asks getToken once and tries the request again with the fresh token', async () => {
    const asked: TokenRequest[] = [];
    const { client, calls, authErrors, accept, live } = await tab(token('old'), (request) => {
      asked.push(request);
      return token('new');
    });
    accept(token('new'));
    const me = await client.api.me();
    expect(me.id).toBe(ME);
    expect(asked[0]).toEqual({ reason: 'refused', current: token('old') });
    expect(calls.filter((c) => c.path === '/me').map((c) => c.headers.authorization)).toEqual([`Bearer ${token('old')}`, `Bearer ${token('new')}`]);
    expect(client.getToken()).toBe(token('new'));
    expect(authErrors).toEqual([]);
    // the channel carries on with the fresh token
    expect(tokenIn(FakeSocket.last.url)).toBe(token('new'));
    FakeSocket.last.welcome();
    await flush();
    expect(live.getState().status).toBe('live');
    client.dispose();
  });

  it('a request sent with a token renewed meanwhile is tried with the fresh one, and nobody is asked again', async () => {
    const gate = deferred<void>();
    let asked = 0;
    const { fetch, calls } = fakeFetch({
      'GET /me': async (call) => {
        await gate.promise;
        return call.headers.authorization === `Bearer ${token('new')}`
          ? { status: 200, body: { type: 'User', table: 'users', param: '1', id: ME, name: 'Alice', color: '#e6194b', kind: 'person' } }
          : { status: 401, body: { error: { code: 'unauthorized', message: 'expired' } } };
      },
    });
    const client = new BatonClient({
      baseUrl: 'http://baton.test',
      fetch,
      storage: new MemoryStorage(),
      sessionId: SESSION,
      token: token('old'),
      releaseOnPageHide: false,
      askBeforeUnload: false,
      getToken: () => {
        asked++;
        return token('other');
      },
    });
    // a request goes out with the old token; a fresh one comes before baton answers it
    const asking = client.api.me();
    await flush();
    client.setToken(token('new'));
    gate.resolve();
    expect((await asking).id).toBe(ME);
    expect(asked).toBe(0);
    expect(calls.map((c) => c.headers.authorization)).toEqual([`Bearer ${token('old')}`, `Bearer ${token('new')}`]);
    client.dispose();
  });

  it('the same token back is no fresh token: the tab is signed out as without getToken', async () => {
    const { client, authErrors, live, accept } = await tab(token('old'), () => token('old'));
    accept(token('someone else'));
    await expect(client.api.me()).rejects.toMatchObject({ status: 401 });
    expect(authErrors).toHaveLength(1);
    expect(live.getState().status).toBe('stopped');
    client.dispose();
  });
});

describe('a kicked channel with reason signed_out', () => {
  it('with getToken: a fresh token reconnects and resyncs it, and the tab keeps its lock', async () => {
    const { client, live, authErrors } = await tab(token('old'), (request) => (request.reason === 'signed_out' ? token('new') : request.current));
    await client.locks.acquire(target);
    FakeSocket.last.frame({ type: 'kicked', reason: 'signed_out' });
    await flush();
    expect(FakeSocket.all).toHaveLength(2);
    expect(tokenIn(FakeSocket.last.url)).toBe(token('new'));
    FakeSocket.last.welcome({ activeLocks: [lockOn(target, 77)] });
    await flush();
    expect(live.getState().status).toBe('live');
    expect(client.locks.info(target).state).toBe('owned');
    expect(authErrors).toEqual([]);
    client.dispose();
  });

  it('when getToken has none, it stops as before', async () => {
    const { live, authErrors, client } = await tab(token('old'), () => null);
    FakeSocket.last.frame({ type: 'kicked', reason: 'signed_out' });
    await flush();
    expect(live.getState().status).toBe('stopped');
    expect(live.getState().error).toBeInstanceOf(KickedError);
    expect(authErrors).toHaveLength(1);
    expect(FakeSocket.all).toHaveLength(1);
    client.dispose();
  });
});

describe('before the token ends', () => {
  it('asks for a fresh token shortly before exp, and the channel reconnects with it', async () => {
    const now = Math.floor(Date.now() / 1000);
    // a 100 s token: asked a fifth of its life (20 s) before it ends
    const first = token('first', now + 100, now);
    const asked: TokenRequest['reason'][] = [];
    const { client, live } = await tab(first, (request) => {
      asked.push(request.reason);
      return request.reason === 'expiring' ? token('second', now + 200, now + 80) : request.current;
    });
    await client.locks.acquire(target);
    await vi.advanceTimersByTimeAsync(79_000);
    expect(asked).toEqual([]);
    expect(FakeSocket.all).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked[0]).toBe('expiring');
    expect(client.getToken()).toBe(token('second', now + 200, now + 80));
    expect(FakeSocket.all).toHaveLength(2);
    expect(tokenIn(FakeSocket.last.url)).toBe(token('second', now + 200, now + 80));
    FakeSocket.last.welcome({ activeLocks: [lockOn(target, 77)] });
    await flush();
    expect(live.getState().status).toBe('live');
    expect(client.locks.info(target).state).toBe('owned');
    client.dispose();
  });

  it('every reconnect asks first, and connects with what it gets', async () => {
    const asked: TokenRequest['reason'][] = [];
    const { client } = await tab(token('old'), (request) => {
      asked.push(request.reason);
      return token('fresh');
    });
    FakeSocket.last.drop();
    await vi.advanceTimersByTimeAsync(100);
    expect(asked).toEqual(['reconnect']);
    expect(FakeSocket.all).toHaveLength(2);
    expect(tokenIn(FakeSocket.last.url)).toBe(token('fresh'));
    client.dispose();
  });
});
