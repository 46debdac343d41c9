import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, KickedError, UnauthorizedError, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, fakeFetch, schemaDoc, tokenFor } from './fakes.js';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/** A tab on a fake baton: `answers` says how each `GET /cases/demo` goes, in turn (then 200). */
function tab(answers: Answer[] = []) {
  FakeSocket.all = [];
  const network = new EventTarget();
  const page = Object.assign(new EventTarget(), { visibilityState: 'visible' });
  const { fetch, calls } = fakeFetch({
    'GET /schema': () => ({ status: 200, body: schemaDoc }),
    'GET /cases/demo': () => answers.shift() ?? { status: 200, body: caseDetail() },
  });
  const client = new BatonClient({
    baseUrl: 'http://baton.test',
    fetch,
    WebSocket: FakeSocket as unknown as WebSocketConstructor,
    storage: new MemoryStorage(),
    sessionId: SESSION,
    token: tokenFor(ME),
    releaseOnPageHide: false,
    signals: { network, page },
    // the jitter's low end: every delay is half its step (250, 500, 1000 … ms)
    random: () => 0,
  });
  const handle = client.openCase('demo');
  const refetches = () => calls.filter((c) => c.path === '/cases/demo').length;
  return { client, live: handle.live, network, page, refetches, calls };
}

const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the watchdog', () => {
  it('pings every heartbeatMs; a pong not back by the next ping replaces the connection and resyncs', async () => {
    const { live, refetches } = tab();
    const first = FakeSocket.last;
    first.welcome({ heartbeatMs: 1000 });
    await tick();
    expect(live.status).toBe('live');
    expect(refetches()).toBe(1);

    await tick(1000);
    expect(first.sent).toEqual([{ type: 'ping' }]);
    first.frame({ type: 'pong' });
    await tick(1000);
    expect(first.pings()).toBe(2);
    expect(first.closedWith).toBeNull();
    // the network goes quiet: the pong of the second ping never comes
    await tick(999);
    expect(first.closedWith).toBeNull();
    await tick(1);
    expect(first.closedWith).toBe(4000);
    expect(live.status).toBe('reconnecting');
    // the backoff started over after the last resync: the first delay
    await tick(249);
    expect(FakeSocket.all).toHaveLength(1);
    await tick(1);
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.last.welcome({ heartbeatMs: 1000 });
    await tick();
    expect(live.status).toBe('live');
    expect(refetches()).toBe(2);
  });

  it('a server that sends no heartbeatMs gets no pings, and the connection is kept', async () => {
    const { live } = tab();
    FakeSocket.last.welcome();
    await tick(60_000);
    expect(FakeSocket.last.sent).toEqual([]);
    expect(FakeSocket.all).toHaveLength(1);
    expect(live.status).toBe('live');
  });

  it('checks at once on `online` and on `visibilitychange` to visible', async () => {
    const { live, network, page } = tab();
    const socket = FakeSocket.last;
    socket.welcome({ heartbeatMs: 5000 });
    await tick();
    network.dispatchEvent(new Event('online'));
    expect(socket.pings()).toBe(1);
    socket.frame({ type: 'pong' });
    await tick(4000);
    expect(socket.closedWith).toBeNull();

    // hidden: nothing to check; visible again: a ping at once, and no pong within a heartbeat is a dead connection
    page.visibilityState = 'hidden';
    page.dispatchEvent(new Event('visibilitychange'));
    expect(socket.pings()).toBe(1);
    page.visibilityState = 'visible';
    page.dispatchEvent(new Event('visibilitychange'));
    expect(socket.pings()).toBe(2);
    await tick(5000);
    expect(socket.closedWith).toBe(4000);
    expect(live.status).toBe('reconnecting');
  });

  it('`online` with a server that sends no heartbeatMs replaces the connection', async () => {
    const { live, network, refetches } = tab();
    FakeSocket.last.welcome();
    await tick();
    network.dispatchEvent(new Event('online'));
    expect(FakeSocket.all[0]!.closedWith).toBe(4000);
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.last.welcome();
    await tick();
    expect(live.status).toBe('live');
    expect(refetches()).toBe(2);
  });

  it('`online` while waiting to retry connects at once', async () => {
    const { network } = tab();
    FakeSocket.last.welcome();
    await tick();
    FakeSocket.last.drop();
    await tick(100);
    expect(FakeSocket.all).toHaveLength(1);
    network.dispatchEvent(new Event('online'));
    expect(FakeSocket.all).toHaveLength(2);
  });
});

describe('reconnect backoff', () => {
  it('a failed refetch does not reconnect at once; delays grow until a resync succeeds, then start over', async () => {
    const unavailable = { status: 503, body: { error: { code: 'unavailable', message: 'down' } } };
    const { live, refetches } = tab([{ status: 200, body: caseDetail() }, unavailable, unavailable, unavailable]);
    FakeSocket.last.welcome();
    await tick();
    expect(live.status).toBe('live');

    const delays: number[] = [];
    FakeSocket.last.drop();
    for (let i = 0; i < 4; i++) {
      const before = FakeSocket.all.length;
      let waited = 0;
      while (FakeSocket.all.length === before) {
        await tick(10);
        waited += 10;
      }
      delays.push(waited);
      // the server answers the socket, the REST refetch fails (503) three times, then works
      FakeSocket.last.welcome();
      await tick();
    }
    expect(refetches()).toBe(5);
    // 250 after a good resync; then 500, 1000, 2000 after each failed one (never at once)
    expect(delays).toEqual([250, 500, 1000, 2000]);
    expect(live.status).toBe('live');
    // the fifth refetch worked: the next drop starts from the first delay again
    FakeSocket.last.drop();
    await tick(249);
    expect(FakeSocket.all).toHaveLength(5);
    await tick(1);
    expect(FakeSocket.all).toHaveLength(6);
  });

  it('the welcome alone does not reset the backoff', async () => {
    const unavailable = { status: 503, body: { error: { code: 'unavailable', message: 'down' } } };
    tab([unavailable, unavailable]);
    FakeSocket.last.welcome();
    await tick();
    // refetch failed: 250, then (welcome, failed again) 500
    await tick(250);
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.last.welcome();
    await tick(499);
    expect(FakeSocket.all).toHaveLength(2);
    await tick(1);
    expect(FakeSocket.all).toHaveLength(3);
  });

  it('honours Retry-After on a 429 and a 503 of the refetch, and `online` does not cut it short', async () => {
    const limited = { status: 429, body: { error: { code: 'rate_limited', message: 'slow down' } }, headers: { 'Retry-After': '7' } };
    const busy = { status: 503, body: { error: { code: 'unavailable', message: 'busy' } }, headers: { 'Retry-After': '3' } };
    const { network } = tab([limited, busy]);
    FakeSocket.last.welcome();
    await tick();
    await tick(6999);
    network.dispatchEvent(new Event('online'));
    expect(FakeSocket.all).toHaveLength(1);
    await tick(1);
    expect(FakeSocket.all).toHaveLength(2);

    // a connection that fails before its welcome asks over REST why: the 503 says 3 s
    FakeSocket.last.drop();
    await tick(2999);
    expect(FakeSocket.all).toHaveLength(2);
    await tick(1);
    expect(FakeSocket.all).toHaveLength(3);
  });

  it('a 401 of the refetch stops the channel for good', async () => {
    const { live } = tab([{ status: 401, body: { error: { code: 'unauthorized', message: 'expired' } } }]);
    FakeSocket.last.welcome();
    await tick();
    expect(live.status).toBe('stopped');
    expect(live.error).toBeInstanceOf(UnauthorizedError);
    await tick(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });
});

describe('kicked', () => {
  it.each(['kicked', 'access_removed', 'signed_out'])('after `kicked` (%s) the tab says why and never reconnects', async (reason) => {
    const { client, live } = tab();
    const authErrors: Error[] = [];
    client.onAuthError((e) => authErrors.push(e));
    FakeSocket.last.welcome();
    await tick();
    FakeSocket.last.frame({ type: 'kicked', reason });
    FakeSocket.last.drop(1008);
    await tick(120_000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(live.status).toBe('stopped');
    expect(live.error).toBeInstanceOf(KickedError);
    expect((live.error as KickedError).reason).toBe(reason);
    // a token that ended signs the whole client out
    expect(authErrors.map((e) => (e as UnauthorizedError).code)).toEqual(reason === 'signed_out' ? ['signed_out'] : []);
  });

  it('a close with 1008 and no `kicked` frame asks over REST before retrying', async () => {
    const { live, refetches } = tab([
      { status: 200, body: caseDetail() },
      { status: 403, body: { error: { code: 'forbidden', message: 'not a member' } } },
    ]);
    FakeSocket.last.welcome();
    await tick();
    FakeSocket.last.drop(1008);
    await tick();
    expect(refetches()).toBe(2);
    expect(live.status).toBe('stopped');
    await tick(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });
});

describe('own echoes', () => {
  it('drops a change as its own echo only when both its session id and its user are the editor', async () => {
    const { live } = tab();
    FakeSocket.last.welcome();
    await tick();
    const content = () => live.store.get<ReturnType<typeof card>>('Card/11')?.content;
    // another user sending this tab's session id is another tab
    FakeSocket.last.frame({ type: 'update', watchable: card(11, 1, 2, 'by Bob'), editorSessionId: SESSION, editorUserId: 2 });
    expect(content()).toBe('by Bob');
    FakeSocket.last.frame({ type: 'update', watchable: card(11, 1, 3, 'mine'), editorSessionId: SESSION, editorUserId: ME });
    expect(content()).toBe('by Bob');
    // a server that does not send editorUserId: the session id decides
    FakeSocket.last.frame({ type: 'update', watchable: card(11, 1, 4, 'mine too'), editorSessionId: SESSION });
    expect(content()).toBe('by Bob');
    FakeSocket.last.frame({ type: 'update', watchable: card(11, 1, 5, 'other tab'), editorSessionId: 'tab-2', editorUserId: ME });
    expect(content()).toBe('other tab');
  });
});

describe('closing a case', () => {
  it('waits `closeDelay`: reopened meanwhile (StrictMode, a quick way back), it keeps its connection', async () => {
    FakeSocket.all = [];
    const { fetch } = fakeFetch({
      'GET /schema': () => ({ status: 200, body: schemaDoc }),
      'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
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
      closeDelay: 500,
    });
    const first = client.openCase('demo');
    first.close();
    const again = client.openCase('demo');
    expect(again.live).toBe(first.live);
    await tick(1000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(FakeSocket.last.closedWith).toBeNull();
    again.close();
    await tick(499);
    expect(FakeSocket.last.closedWith).toBeNull();
    await tick(1);
    expect(FakeSocket.last.closedWith).toBe(1000);
    expect(again.live.status).toBe('stopped');
  });
});
