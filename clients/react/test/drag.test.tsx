// @vitest-environment jsdom
import { act, cleanup, render, renderHook, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { BatonClient, LockHeldError, LockedError } from '@baton/client';
import { BatonProvider, Lockable, useCase, useDragLock, useLock } from '@baton/react';
import { caseFor, person, rest, servers, tab, type Page } from '../../test/support.js';

const wrapperFor =
  (client: BatonClient) =>
  ({ children }: { children: ReactNode }) => <BatonProvider client={client}>{children}</BatonProvider>;

describe.each(servers())('useDragLock on $backend', (server) => {
  const clients: BatonClient[] = [];
  const track = (c: BatonClient) => (clients.push(c), c);
  afterEach(() => {
    cleanup();
    for (const c of clients.splice(0)) c.dispose();
  });

  it('locks the card while dragging, saves the move on drop and releases; the other tab sees it move', async () => {
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const { kase, page, cards } = await caseFor(server, await person(server, 'Owner'), [bob, carol], 2);
    const other = (await rest<Page>(server, bob.token, 'POST', `/cases/${kase.slug}/pages`, { page: { title: 'Second' } })).data;
    const card = cards[0]!;
    const cb = track(tab(server, bob));
    const cc = track(tab(server, carol));

    const b = renderHook(
      () => {
        const live = useCase(kase.slug);
        const current = live.records.Card?.find((c) => c.param === card.param) ?? card;
        return { live, drag: useDragLock(current) };
      },
      { wrapper: wrapperFor(cb) },
    );
    const c = renderHook(() => ({ live: useCase(kase.slug), lock: useLock(card) }), { wrapper: wrapperFor(cc) });
    await waitFor(() => {
      expect(b.result.current.live.status).toBe('live');
      expect(c.result.current.live.status).toBe('live');
    });

    // drag start: bob holds the card, carol sees it
    await act(async () => {
      expect(await b.result.current.drag.start()).toBe(true);
    });
    expect(b.result.current.drag.dragging).toBe(true);
    await waitFor(() => expect(c.result.current.lock).toMatchObject({ state: 'locked', holder: { name: 'Bob' } }));

    // drop on the other page: saved under the lock, then released
    let moved: Awaited<ReturnType<typeof b.result.current.drag.drop>> = null;
    await act(async () => {
      moved = await b.result.current.drag.drop({ parentId: other.id, position: 0 });
    });
    expect(moved).toMatchObject({ pageId: other.id, position: 0 });
    expect(b.result.current.drag.dragging).toBe(false);
    await waitFor(() => {
      expect(c.result.current.lock.state).toBe('unlocked');
      const { children } = c.result.current.live;
      expect(children[`Page/${other.id}`]?.Card?.map((x) => x.param)).toEqual([card.param]);
      expect(children[`Page/${page.id}`]?.Card?.map((x) => x.param)).toEqual([cards[1]!.param]);
    });

    // a cancelled drag releases the lock
    await act(async () => {
      await b.result.current.drag.start();
    });
    await waitFor(() => expect(c.result.current.lock.state).toBe('locked'));
    await act(() => b.result.current.drag.cancel());
    await waitFor(() => expect(c.result.current.lock.state).toBe('unlocked'));
  });

  it('a drag over a held card is refused at the start; a drop onto a deep-locked page is refused and releases', async () => {
    const bob = await person(server, 'Bob');
    const carol = await person(server, 'Carol');
    const alice = await person(server, 'Alice');
    const { kase, page, cards } = await caseFor(server, alice, [bob, carol], 2);
    const other = (await rest<Page>(server, alice.token, 'POST', `/cases/${kase.slug}/pages`, { page: { title: 'Second' } })).data;
    const cb = track(tab(server, bob));
    const cc = track(tab(server, carol));
    const ca = track(tab(server, alice));

    await cc.locks.acquire(cards[1]!);
    const held = renderHook(() => useDragLock(cards[1]!), { wrapper: wrapperFor(cb) });
    await act(async () => {
      expect(await held.result.current.start()).toBe(false);
    });
    expect(held.result.current.error).toBeInstanceOf(LockHeldError);
    expect(held.result.current.dragging).toBe(false);

    // alice restructures the other page: bob's drop there is refused, the card stays, the lock is released
    await ca.locks.acquire(other, { depth: 'infinity' });
    const drag = renderHook(() => ({ drag: useDragLock(cards[0]!), lock: useLock(cards[0]!) }), { wrapper: wrapperFor(cb) });
    await act(async () => {
      expect(await drag.result.current.drag.start()).toBe(true);
    });
    let moved: unknown = 'not yet';
    await act(async () => {
      moved = await drag.result.current.drag.drop({ parentId: other.id });
    });
    expect(moved).toBeNull();
    expect(drag.result.current.drag.error).toBeInstanceOf(LockedError);
    expect((drag.result.current.drag.error as LockedError).holder.name).toBe('Alice');
    expect(drag.result.current.lock.state).toBe('unlocked');
    const now = await rest<{ pageId: number }>(server, bob.token, 'GET', `/cards/${cards[0]!.param}`);
    expect(now.data.pageId).toBe(page.id);
  });

  it('useLock and <Lockable> show a card under someone else\'s deep page lock as held by them', async () => {
    const alice = await person(server, 'Alice');
    const bob = await person(server, 'Bob');
    const { kase, page, cards } = await caseFor(server, alice, [bob], 1);
    const card = cards[0]!;
    const ca = track(tab(server, alice));
    const cb = track(tab(server, bob));

    function CardView() {
      const live = useCase(kase.slug);
      const current = live.records.Card?.[0];
      if (!current) return <p>loading</p>;
      return (
        <Lockable record={current}>
          {({ state, holder, containerLock }) => (
            <p data-testid="card">{state === 'locked' && containerLock ? `${holder?.name} is restructuring this ${containerLock.lockable.type.toLowerCase()}` : state}</p>
          )}
        </Lockable>
      );
    }
    const b = renderHook(() => ({ live: useCase(kase.slug), lock: useLock(card), pageLock: useLock(page) }), { wrapper: wrapperFor(cb) });
    render(<CardView />, { wrapper: wrapperFor(cb) });
    await waitFor(() => expect(b.result.current.live.status).toBe('live'));
    await waitFor(() => expect(screen.getByTestId('card').textContent).toBe('unlocked'));

    const a = renderHook(() => useLock(page), { wrapper: wrapperFor(ca) });
    const deep = await act(() => a.result.current.acquire({ depth: 'infinity' }));
    expect(deep.depth).toBe('infinity');
    await waitFor(() => expect(b.result.current.lock).toMatchObject({ state: 'locked', holder: { name: 'Alice' } }));
    expect(b.result.current.lock.containerLock?.token).toBe(deep.token);
    expect(b.result.current.pageLock).toMatchObject({ state: 'locked', lock: { depth: 'infinity' }, containerLock: null });
    await waitFor(() => expect(screen.getByTestId('card').textContent).toBe('Alice is restructuring this page'));

    await act(() => a.result.current.release());
    await waitFor(() => expect(b.result.current.lock).toMatchObject({ state: 'unlocked', containerLock: null }));
    await waitFor(() => expect(screen.getByTestId('card').textContent).toBe('unlocked'));
  });
});
