/**
 * The kit under real networks: a real baton behind a TCP proxy that delays,
 * black-holes and refuses connections, and loses or holds back one request
 * or its answer (test/proxy.ts). Each scenario logs its timings.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { CancelledError, KickedError, type BatonClient, type LiveCase } from '../src/index.js';
import { MemoryStorage, caseFor, person, rest, servers, tabsDisposedAfterEach, type Card, type ServerInfo } from '../../test/support.js';
import { TcpProxy } from '../../test/proxy.js';

/** Whether the server's `welcome` says `heartbeatMs` (then tabs ping it and notice a dead connection by themselves). */
async function heartbeatOf(server: ServerInfo, token: string, slug: string): Promise<number | null> {
  const url = `${server.baseUrl.replace(/^http/, 'ws')}/cases/${slug}/edits?token=${token}&sessionId=${crypto.randomUUID()}`;
  const ws = new WebSocket(url);
  try {
    const welcome = await new Promise<{ heartbeatMs?: number }>((resolve, reject) => {
      ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as { heartbeatMs?: number }));
      ws.once('error', reject);
    });
    return typeof welcome.heartbeatMs === 'number' ? welcome.heartbeatMs : null;
  } finally {
    ws.close();
  }
}

const since = (t0: number) => Math.round(performance.now() - t0);

describe.each(servers())('under a bad network on $backend', (server) => {
  const tab = tabsDisposedAfterEach();
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
  });
  const proxied = async () => {
    const proxy = await TcpProxy.for(server.baseUrl);
    proxies.push(proxy);
    return proxy;
  };
  /** A tab that reaches baton through the proxy; `network` fires `online` for it. */
  const flakyTab = (proxy: TcpProxy, token: string) => {
    const network = new EventTarget();
    const client: BatonClient = tab(server, null, new MemoryStorage(), {
      baseUrl: proxy.baseUrl,
      token,
      backoff: { initialDelay: 100, maxDelay: 1000, connectTimeout: 2000 },
      signals: { network },
      // a request with no answer gives up after a second (10 s by default)
      timeout: 1000,
    });
    return { client, network };
  };
  const status = (live: LiveCase) => live.getState().status;

  it('black-holed: the dead connection is noticed, replaced and resynced, with what was missed', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const heartbeat = await heartbeatOf(server, bob.token, kase.slug);
    const proxy = await proxied();
    const { client, network } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });

    const t0 = performance.now();
    proxy.blackhole();
    // with the server's heartbeat the tab notices by itself; without it, the browser's `online` tells it
    if (heartbeat === null) network.dispatchEvent(new Event('online'));
    await vi.waitFor(() => expect(status(live)).toBe('reconnecting'), { timeout: 10_000, interval: 10 });
    const noticed = since(t0);
    // meanwhile Alice saves: the tab cannot hear it
    const text = 'saved while Bob was in the tunnel';
    await rest(server, alice.token, 'PATCH', `/cards/${cards[0]!.id}`, { card: { content: text } });
    await new Promise((r) => setTimeout(r, 300));
    const t1 = performance.now();
    proxy.pass();
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000, interval: 10 });
    const back = since(t1);
    expect(live.store.get<Card>(`Card/${cards[0]!.id}`)?.content).toBe(text);
    console.log(
      `[${server.backend}] black hole: noticed after ${noticed} ms (${heartbeat === null ? 'online event; server sends no heartbeatMs' : `heartbeat ${heartbeat} ms`}), live again ${back} ms after the network came back`,
    );
    if (heartbeat !== null) expect(noticed).toBeLessThan(3 * heartbeat + 500);
  });

  it('refused: the tab backs off instead of storming, and comes back when the server does', async () => {
    const alice = await person(server, 'Alice');
    const { kase } = await caseFor(server, alice, []);
    const proxy = await proxied();
    const { client } = flakyTab(proxy, alice.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });

    const before = proxy.accepted;
    proxy.refuse();
    await vi.waitFor(() => expect(status(live)).toBe('reconnecting'), { timeout: 5_000, interval: 10 });
    await new Promise((r) => setTimeout(r, 3000));
    const attempts = proxy.accepted - before;
    const t1 = performance.now();
    proxy.pass();
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000, interval: 10 });
    const back = since(t1);
    console.log(`[${server.backend}] refused for 3 s: ${attempts} connections tried (channel and REST), live again ${back} ms after the server came back`);
    // 100 ms doubling to 1 s: about seven tries in 3 s, each a socket and a REST check
    expect(attempts).toBeLessThanOrEqual(20);
    expect(back).toBeLessThan(2500);
  });

  it('delayed: a release while the acquire is on its way wins; the lock is released on the server, never adopted', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const card = cards[0]!;
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });

    proxy.pass(250);
    const t0 = performance.now();
    const acquiring = client.locks.acquire(card).then(
      () => 'adopted',
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 50));
    await client.locks.release(card);
    const outcome = await acquiring;
    // the release does not wait for the acquire: the late lock's release is done once the tab's releases are settled
    await client.locks.settled();
    const took = since(t0);
    expect(outcome).toBeInstanceOf(CancelledError);
    // never adopted: no token to save with; the case shows the lock until its `destroy` frame comes (250 ms late)
    expect(client.locks.tokenFor(card)).toBeNull();
    await vi.waitFor(() => expect(client.locks.info(card).state).toBe('unlocked'), { timeout: 5_000 });
    const { data } = await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${card.id}`);
    expect(data.state).toBe('unlocked');
    // and it stays released: nothing renews it
    await new Promise((r) => setTimeout(r, 500));
    expect((await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${card.id}`)).data.state).toBe('unlocked');
    console.log(`[${server.backend}] 250 ms each way: acquire cancelled by a release, the late lock released on the server ${took} ms after the acquire was sent`);
  });

  /** What baton says about a card's lock now, as someone else. */
  const statusOf = async (token: string, card: Card) =>
    (await rest<{ state: string; lock?: { token: string; sessionId: string } }>(server, token, 'GET', `/locks/status?lockableType=Card&lockableParam=${card.id}`)).data;
  const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> =>
    Promise.race([promise, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);

  it('a release during a resync: the snapshot taken before it does not make the lock the tab’s again', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const card = cards[0]!;
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });
    await client.locks.acquire(card);

    // a resync whose snapshot (with the lock in it) is 600 ms on its way back
    proxy.cut({ match: 'GET /cases/', delay: 600 });
    const resync = live.refetch();
    await new Promise((r) => setTimeout(r, 200));
    await client.locks.release(card);
    expect((await statusOf(alice.token, card)).state).toBe('unlocked');
    await resync;
    expect(proxy.caught).toEqual(['GET /cases/']);
    expect(client.locks.info(card).state).toBe('unlocked');
    expect(client.locks.tokenFor(card)).toBeNull();
    expect(live.getState().lockOn[`Card/${card.id}`]).toBeUndefined();
    console.log(`[${server.backend}] released during a resync: the older snapshot's lock was not adopted`);
  });

  it('a release whose request is lost is tried again until baton confirms it', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const card = cards[0]!;
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });
    await client.locks.acquire(card);

    proxy.cut({ match: 'DELETE /locks/', lose: 'request' });
    const t0 = performance.now();
    void client.locks.release(card).catch(() => {});
    expect(client.locks.info(card).state).toBe('unlocked');
    // the channel's pongs would keep the lock for good: the tab tries again, and baton lets go
    await vi.waitFor(async () => expect((await statusOf(alice.token, card)).state).toBe('unlocked'), { timeout: 5_000, interval: 100 });
    expect(proxy.caught).toEqual(['DELETE /locks/']);
    console.log(`[${server.backend}] a lost release: confirmed by baton ${since(t0)} ms after the first try`);
  });

  it('an acquire whose answer is lost is settled with GET /locks/status: adopted when still wanted, else released', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });

    // still wanted: the tab gets the lock baton granted
    proxy.cut({ match: 'POST /locks ', lose: 'answer' });
    const t0 = performance.now();
    const got = await within(client.locks.acquire(cards[0]!), 5_000);
    expect(got).not.toBe('still waiting');
    expect(client.locks.info(cards[0]!).state).toBe('owned');
    const held = await statusOf(alice.token, cards[0]!);
    expect(held).toMatchObject({ state: 'locked', lock: { token: client.locks.tokenFor(cards[0]!), sessionId: client.sessionId } });
    const adopted = since(t0);

    // let go of meanwhile: the lock baton granted is released, not left held and invisible
    proxy.cut({ match: 'POST /locks ', lose: 'answer' });
    const acquiring = client.locks.acquire(cards[1]!).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    await within(client.locks.release(cards[1]!), 5_000);
    expect(await within(acquiring, 5_000)).toBeInstanceOf(CancelledError);
    await vi.waitFor(async () => expect((await statusOf(alice.token, cards[1]!)).state).toBe('unlocked'), { timeout: 5_000, interval: 100 });
    expect(client.locks.info(cards[1]!).state).toBe('unlocked');
    expect(proxy.caught).toEqual(['POST /locks ', 'POST /locks ']);
    console.log(`[${server.backend}] a lost acquire answer: settled and adopted ${adopted} ms after the request`);
  });

  it('a hung request: Cancel answers at once, and Edit works again while it hangs', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const card = cards[0]!;
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });

    proxy.cut({ match: 'POST /locks ', lose: 'request' });
    const hung = client.locks.acquire(card).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    expect(await within(client.locks.release(card), 300)).not.toBe('still waiting');
    const cancelled = since(t0);
    expect(client.locks.info(card).state).toBe('unlocked');
    // Edit again: a new request, not behind the hung one
    await within(client.locks.acquire(card), 3_000);
    expect(client.locks.info(card).state).toBe('owned');
    // the hung one gives up at its timeout and is cancelled; the new lock stays
    expect(await within(hung, 5_000)).toBeInstanceOf(CancelledError);
    expect(client.locks.info(card).state).toBe('owned');
    expect((await statusOf(alice.token, card)).state).toBe('locked');
    console.log(`[${server.backend}] a hung acquire: Cancel answered in ${cancelled} ms`);
  });

  it('kicked: the tab says why and does not reconnect', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase } = await caseFor(server, alice, [bob]);
    const proxy = await proxied();
    const { client } = flakyTab(proxy, bob.token);
    const { live } = client.openCase(kase.slug);
    await vi.waitFor(() => expect(status(live)).toBe('live'), { timeout: 10_000 });
    const t0 = performance.now();
    await rest(server, server.adminToken, 'DELETE', `/admin/sessions/${client.sessionId}`);
    await vi.waitFor(() => expect(status(live)).toBe('stopped'), { timeout: 5_000, interval: 10 });
    const stopped = since(t0);
    expect(live.getState().error).toBeInstanceOf(KickedError);
    // `kicked` (a server before the trust changes says it in words)
    const { reason } = live.getState().error as KickedError;
    if (!/\s/.test(reason)) expect(reason).toBe('kicked');
    const after = proxy.accepted;
    await new Promise((r) => setTimeout(r, 1500));
    expect(proxy.accepted).toBe(after);
    console.log(`[${server.backend}] kicked (reason ${JSON.stringify(reason)}): stopped ${stopped} ms after the kick, no reconnect in 1.5 s`);
  });
});
