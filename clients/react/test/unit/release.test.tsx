// @vitest-environment jsdom
import { act, cleanup, render, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { BatonClient, type LiveState, type WebSocketConstructor } from '@baton/client';
import { BatonProvider, Lockable, useDragLock, useLiveCase, useLiveSelector, type LockableRenderProps } from '@baton/react';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, deferred, fakeFetch, lockOn, schemaDoc, tokenFor } from '../../../core/test/unit/fakes.js';

type Answer = { status: number; body?: unknown };

function setup() {
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
    closeDelay: 50,
  });
  const wrapper = ({ children }: { children: ReactNode }) => <BatonProvider client={client}>{children}</BatonProvider>;
  const releases = () => calls.filter((c) => c.method === 'DELETE').map((c) => c.path);
  return { client, acquires, wrapper, releases };
}

const target = card(11, 1);

afterEach(() => {
  cleanup();
});

describe('cancel and unmount always release', () => {
  it('<Lockable releaseOnUnmount> unmounted while its acquire is in flight releases the lock it brings', async () => {
    const { acquires, wrapper, releases, client } = setup();
    let props: LockableRenderProps | null = null;
    const view = render(
      <Lockable record={target} releaseOnUnmount>
        {(p) => {
          props = p;
          return <p>{p.state}</p>;
        }}
      </Lockable>,
      { wrapper },
    );
    let started: Promise<boolean> | null = null;
    act(() => {
      started = props!.startEditing();
    });
    await waitFor(() => expect(acquires).toHaveLength(1));
    view.unmount();
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 91) });
    // not a refusal: the start resolves false without an error
    expect(await started!).toBe(false);
    await waitFor(() => expect(releases()).toEqual(['/locks/91']));
    expect(client.locks.info(target).state).toBe('unlocked');
  });

  it('useDragLock: a cancel before the start is granted releases the lock the start brings', async () => {
    const { acquires, wrapper, releases, client } = setup();
    const { result } = renderHook(() => useDragLock(target), { wrapper });
    let started: Promise<boolean> | null = null;
    act(() => {
      started = result.current.start();
    });
    await waitFor(() => expect(acquires).toHaveLength(1));
    let cancelled: Promise<void> | null = null;
    act(() => {
      cancelled = result.current.cancel();
    });
    acquires[0]!.resolve({ status: 201, body: lockOn(target, 92) });
    await act(async () => {
      await cancelled;
    });
    expect(await started!).toBe(false);
    expect(releases()).toEqual(['/locks/92']);
    expect(result.current.error).toBeNull();
    expect(client.locks.info(target).state).toBe('unlocked');
  });
});

describe('selections', () => {
  it('a selector re-renders only for its own record', async () => {
    const { wrapper } = setup();
    const renders: Record<string, number> = {};
    function Card({ live, id }: { live: ReturnType<typeof useLiveCase>; id: string }) {
      const content = useLiveSelector(live, (s: LiveState) => s.children['Page/1']?.Card?.find((c) => c.param === id)?.content);
      renders[id] = (renders[id] ?? 0) + 1;
      return <p>{String(content)}</p>;
    }
    function Page() {
      const live = useLiveCase('demo');
      return (
        <>
          <Card live={live} id="11" />
          <Card live={live} id="12" />
        </>
      );
    }
    render(<Page />, { wrapper });
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    act(() => FakeSocket.last.welcome());
    await waitFor(() => expect(renders['11']).toBeGreaterThan(1));
    await new Promise((r) => setTimeout(r, 100));
    const before = { ...renders };
    act(() => FakeSocket.last.frame({ type: 'update', watchable: card(11, 1, 2, 'edited'), editorSessionId: 'tab-2', editorUserId: 2 }));
    await waitFor(() => expect(renders['11']).toBeGreaterThan(before['11']!));
    expect(renders['12']).toBe(before['12']);
  });
});
