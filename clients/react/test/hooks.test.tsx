// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, renderHook, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BatonClient, type WebSocketConstructor } from '@baton/client';
import { BatonProvider, Lockable, useCase, useLock, usePresence } from '@baton/react';
import { MemoryStorage, caseFor, person, rest, servers, tab, type Card } from '../../test/support.js';

const wrapperFor =
  (client: BatonClient) =>
  ({ children }: { children: ReactNode }) => <BatonProvider client={client}>{children}</BatonProvider>;

describe.each(servers())('React bindings on $backend', (server) => {
  const clients: BatonClient[] = [];
  const track = (c: BatonClient) => (clients.push(c), c);
  afterEach(() => {
    cleanup();
    for (const c of clients.splice(0)) c.dispose();
  });

  it('useCase, usePresence and useLock follow two users through "Edit anyway"', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, await person(server, 'Owner'), [alice, bob]);
    const card = cards[0]!;
    const ca = track(tab(server, alice));
    const cb = track(tab(server, bob));
    const useAll = () => ({ kase: useCase(kase.slug), presence: usePresence(kase.slug), lock: useLock(card) });
    const a = renderHook(useAll, { wrapper: wrapperFor(ca) });
    const b = renderHook(useAll, { wrapper: wrapperFor(cb) });

    await waitFor(() => {
      expect(a.result.current.kase.status).toBe('live');
      expect(b.result.current.kase.status).toBe('live');
    });
    expect(a.result.current.kase.records.Card?.[0]).toMatchObject({ param: card.param, content: 'card 0' });
    await waitFor(() => expect(b.result.current.presence.map((o) => o.user.name).sort()).toEqual(['Alice', 'Bob']));

    expect(a.result.current.lock.state).toBe('unlocked');
    await act(() => a.result.current.lock.acquire());
    expect(a.result.current.lock).toMatchObject({ state: 'owned', holder: { name: 'Alice' } });
    await waitFor(() => expect(b.result.current.lock).toMatchObject({ state: 'locked', holder: { name: 'Alice' } }));

    // bob's save would be refused; "Edit anyway" takes the lock over
    await act(() => b.result.current.lock.editAnyway());
    expect(b.result.current.lock.state).toBe('owned');
    await waitFor(() =>
      expect(a.result.current.lock).toMatchObject({ state: 'lost', lostTo: { name: 'Bob' } }),
    );

    // bob's edit reaches alice's view live
    await act(() => cb.save(card, { content: 'Bob took over' }));
    await waitFor(() => expect(a.result.current.kase.records.Card?.[0]?.content).toBe('Bob took over'));

    // releasing clears alice's loss; she sees bob's lock again
    await act(() => a.result.current.lock.release());
    expect(a.result.current.lock).toMatchObject({ state: 'locked', holder: { name: 'Bob' } });
  });

  it('<Lockable> hands the child the editing flow, for two tabs of one user', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const card = cards[0]!;

    function Editor({ who }: { who: string }) {
      const live = useCase(kase.slug);
      const current = live.records.Card?.find((c) => c.param === card.param);
      if (!current) return <p>{who}: loading</p>;
      return (
        <Lockable record={current}>
          {({ editing, state, holder, lostTo, startEditing, stopEditing, editAnyway, error }) => (
            <div data-testid={who}>
              <span>{`${who}: ${state}`}</span>
              {editing && <button onClick={() => void stopEditing()}>{`${who} done`}</button>}
              {state === 'unlocked' && <button onClick={() => void startEditing()}>{`${who} edit`}</button>}
              {state === 'locked' && (
                <button onClick={() => void editAnyway()}>{`${who} edit anyway (held by ${holder?.name})`}</button>
              )}
              {state === 'lost' && <em>{`${who} lost it to ${lostTo?.name ?? 'nobody'}`}</em>}
              {error && <strong>{`${who} error ${error.code}`}</strong>}
            </div>
          )}
        </Lockable>
      );
    }
    const t1 = track(tab(server, alice));
    const t2 = track(tab(server, alice));
    render(
      <>
        <BatonProvider client={t1}>
          <Editor who="one" />
        </BatonProvider>
        <BatonProvider client={t2}>
          <Editor who="two" />
        </BatonProvider>
      </>,
    );
    fireEvent.click(await screen.findByText('one edit'));
    await screen.findByText('one: owned');
    fireEvent.click(await screen.findByText('two edit anyway (held by Alice)'));
    await screen.findByText('two: owned');
    await screen.findByText('one lost it to Alice');
    fireEvent.click(screen.getByText('two done'));
    await waitFor(() => expect(screen.getByTestId('two').textContent).toContain('two: unlocked'));
  });

  it('<Lockable> reports a lock held by someone else, and an outranked takeover, as errors, not throws', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, alice, [bob]);
    const card: Card = cards[0]!;
    const ca = track(tab(server, alice));
    await ca.locks.acquire(card);
    const cb = track(tab(server, bob));
    // bob's tab has the case open: it sees alice's locks come and go
    await cb.openCase(kase.slug).live.ready();
    render(
      <BatonProvider client={cb}>
        <Lockable record={card}>
          {({ state, startEditing, editAnyway, error, holder, outrankedBy }) => (
            <div>
              <button onClick={() => void startEditing()}>edit</button>
              <button onClick={() => void editAnyway()}>anyway</button>
              <span>{`${state} ${holder?.name ?? '-'} ${error?.code ?? '-'}`}</span>
              <em>{`outranked by ${outrankedBy?.name ?? 'nobody'}`}</em>
            </div>
          )}
        </Lockable>
      </BatonProvider>,
    );
    fireEvent.click(screen.getByText('edit'));
    await screen.findByText('locked Alice lock_held');
    screen.getByText('outranked by nobody');
    // alice manages the case: bob, an editor, cannot take over
    fireEvent.click(screen.getByText('anyway'));
    await screen.findByText('locked Alice outranked');
    screen.getByText('outranked by Alice');
    // a new holding of alice's is a new lock: bob may try again
    await act(() => ca.locks.release(card));
    await act(() => ca.locks.acquire(card));
    await screen.findByText('outranked by nobody');
  });

  it('<Lockable releaseOnUnmount> releases the lock when the editor goes away, and says why a lock was lost', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, cards } = await caseFor(server, await person(server, 'Owner'), [alice, bob]);
    const card: Card = cards[0]!;
    const ca = track(tab(server, alice));
    const cb = track(tab(server, bob));
    const open = ca.openCase(kase.slug);
    await open.live.ready();
    const view = render(
      <BatonProvider client={ca}>
        <Lockable record={card} releaseOnUnmount>
          {({ state, lock, lostTo, lostReason, startEditing }) => (
            <div>
              <button onClick={() => void startEditing()}>edit</button>
              <span>{`${state} ${lock?.user.name ?? '-'} ${lostTo?.name ?? '-'} ${lostReason ?? '-'}`}</span>
            </div>
          )}
        </Lockable>
      </BatonProvider>,
    );
    fireEvent.click(screen.getByText('edit'));
    await screen.findByText('owned Alice - -');
    await act(() => cb.locks.editAnyway(card));
    await screen.findByText('lost Bob Bob overridden');
    await act(() => cb.locks.release(card));
    await act(() => ca.locks.release(card));
    fireEvent.click(screen.getByText('edit'));
    await screen.findByText('owned Alice - -');
    view.unmount();
    await waitFor(async () => {
      const status = await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${card.param}`);
      expect(status.data.state).toBe('unlocked');
    });
    open.close();
  });

  it('useLock and <Lockable> wait in line, and the lock comes by itself', async () => {
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const { kase, cards } = await caseFor(server, await person(server, 'Owner'), [bob, carol]);
    const card: Card = cards[0]!;
    const cb = track(tab(server, bob));
    const cc = track(tab(server, carol));
    const b = renderHook(() => ({ kase: useCase(kase.slug), lock: useLock(card) }), { wrapper: wrapperFor(cb) });
    function Carol() {
      const { status } = useCase(kase.slug);
      return (
        <Lockable record={card}>
          {({ state, position, editing, holder, waitForIt, leaveLine }) => (
            <div>
              <span>{`carol: ${status} ${state} ${position ?? '-'} ${holder?.name ?? '-'}`}</span>
              {state === 'locked' && <button onClick={() => void waitForIt()}>wait for it</button>}
              {state === 'waiting' && <button onClick={() => void leaveLine()}>leave the line</button>}
              {editing && <em>carol edits</em>}
            </div>
          )}
        </Lockable>
      );
    }
    render(
      <BatonProvider client={cc}>
        <Carol />
      </BatonProvider>,
    );
    await waitFor(() => expect(b.result.current.kase.status).toBe('live'));
    await screen.findByText('carol: live unlocked - -');
    await act(() => b.result.current.lock.acquire());
    fireEvent.click(await screen.findByText('wait for it'));
    await screen.findByText('carol: live waiting 1 Bob');
    await waitFor(() => expect(b.result.current.lock.waiters.map((w) => w.user.name)).toEqual(['Carol']));
    expect(b.result.current.lock).toMatchObject({ state: 'owned', position: null });

    fireEvent.click(screen.getByText('leave the line'));
    await screen.findByText('carol: live locked - Bob');
    await waitFor(() => expect(b.result.current.lock.waiters).toEqual([]));

    fireEvent.click(screen.getByText('wait for it'));
    await screen.findByText('carol: live waiting 1 Bob');
    await act(() => b.result.current.lock.release());
    await screen.findByText('carol edits');
    screen.getByText('carol: live owned - Carol');
    await waitFor(() => expect(b.result.current.lock).toMatchObject({ state: 'locked', holder: { name: 'Carol' } }));
  });

  it('releases the tab locks on pagehide', async () => {
    const alice = await person(server, 'Alice');
    const { cards } = await caseFor(server, alice, []);
    const sent: { url: string; init: RequestInit | undefined }[] = [];
    const client = track(
      new BatonClient({
        baseUrl: server.baseUrl,
        // the real fetch, watched: the release must be sent with keepalive
        fetch: (url, init) => (sent.push({ url, init }), fetch(url, init)),
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        storage: new MemoryStorage(),
        token: alice.token,
      }),
    );
    await client.locks.acquire(cards[0]!);
    window.dispatchEvent(new Event('pagehide'));
    await waitFor(async () => {
      const status = await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${cards[0]!.param}`);
      expect(status.data.state).toBe('unlocked');
    });
    const release = sent.find((r) => r.init?.method === 'DELETE');
    expect(release?.url).toBe(`${server.baseUrl}/locks?session=mine`);
    expect(release?.init?.keepalive).toBe(true);
    expect(new Headers(release?.init?.headers).get('X-Session-ID')).toBe(client.sessionId);
  });
});
