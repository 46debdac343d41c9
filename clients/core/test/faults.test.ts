import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import {
  BatonClient,
  ForbiddenError,
  InvalidError,
  NetworkError,
  NotFoundError,
  UnauthorizedError,
  type WebSocketConstructor,
} from '../src/index.js';
import { MemoryStorage, caseFor, forgeToken, person, servers, sleep, tab, type ServerInfo } from '../../test/support.js';

/** A `ws` WebSocket that counts how often the channel tried to connect. */
function countingWebSocket() {
  const counter = { attempts: 0 };
  class Counting extends WebSocket {
    constructor(url: string) {
      super(url);
      counter.attempts++;
    }
  }
  return { counter, WebSocket: Counting as unknown as WebSocketConstructor };
}

describe.each(servers())('faults on $backend', (server: ServerInfo) => {
  const clients: BatonClient[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.dispose();
  });
  const make = (token: string | null, WebSocketImpl?: WebSocketConstructor, baseUrl = server.baseUrl) => {
    const c = new BatonClient({
      baseUrl,
      WebSocket: WebSocketImpl ?? (WebSocket as unknown as WebSocketConstructor),
      storage: new MemoryStorage(),
      token,
      backoff: { initialDelay: 50, maxDelay: 200 },
      releaseOnPageHide: false,
    });
    clients.push(c);
    return c;
  };

  it('signs in with the client; a wrong password is Unauthorized', async () => {
    const alice = await person(server, 'Alice');
    const c = make(null);
    const user = await c.login(alice.email, alice.password);
    expect(user).toMatchObject({ type: 'User', name: 'Alice', email: alice.email });
    expect(c.signedIn).toBe(true);
    expect(await c.api.me()).toMatchObject({ id: user.id });
    await expect(make(null).login(alice.email, 'wrong')).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('an expired token is a typed auth error and the channel stops instead of reconnecting', async () => {
    const alice = await person(server, 'Alice');
    const { kase } = await caseFor(server, alice, []);
    const expired = forgeToken(server, alice.user.id, Math.floor(Date.now() / 1000) - 3600);
    const { counter, WebSocket: Counting } = countingWebSocket();
    const c = make(expired, Counting);
    const authErrors: UnauthorizedError[] = [];
    c.onAuthError((e) => authErrors.push(e));

    await expect(c.api.me()).rejects.toBeInstanceOf(UnauthorizedError);
    const handle = c.openCase(kase.slug);
    await vi.waitFor(() => expect(handle.live.getState().status).toBe('stopped'));
    const error = handle.live.getState().error;
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error?.status).toBe(401);
    expect(authErrors.length).toBeGreaterThanOrEqual(1);
    await sleep(1000);
    expect(counter.attempts).toBe(1);
    expect(handle.live.getState().status).toBe('stopped');
  });

  it('a garbage token is refused the same way', async () => {
    const alice = await person(server, 'Alice');
    const { kase } = await caseFor(server, alice, []);
    const c = make('not-a-token');
    const handle = c.openCase(kase.slug);
    await vi.waitFor(() => expect(handle.live.getState().error).toBeInstanceOf(UnauthorizedError));
  });

  it('a case the user may not see, or that does not exist, stops the channel', async () => {
    const alice = await person(server, 'Alice');
    const mallory = await person(server, 'Mallory');
    const { kase } = await caseFor(server, alice, []);
    const c = tab(server, mallory);
    clients.push(c);
    const forbidden = c.openCase(kase.slug);
    const missing = c.openCase('no-such-case');
    await vi.waitFor(() => {
      expect(forbidden.live.getState().error).toBeInstanceOf(ForbiddenError);
      expect(missing.live.getState().error).toBeInstanceOf(NotFoundError);
    });
    await expect(c.api.lockStatus({ type: 'Nope', param: '1' })).rejects.toBeInstanceOf(InvalidError);
  });

  it('a server that is down gives NetworkError, and the channel keeps retrying with backoff', async () => {
    const alice = await person(server, 'Alice');
    const { counter, WebSocket: Counting } = countingWebSocket();
    const c = make(alice.token, Counting, 'http://127.0.0.1:9');
    const error = await c.api.me().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).status).toBe(0);
    const handle = c.openCase('any');
    await sleep(1200);
    expect(handle.live.getState().status).toBe('reconnecting');
    expect(handle.live.getState().error).toBeNull();
    // 50ms doubling to 200ms with jitter: several tries, not a tight loop
    expect(counter.attempts).toBeGreaterThanOrEqual(3);
    expect(counter.attempts).toBeLessThan(25);
  });
});
