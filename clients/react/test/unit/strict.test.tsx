// @vitest-environment jsdom
/**
 * Under React's StrictMode (effects run, are cleaned up and run again):
 * one socket per case with the kit's defaults, no release of a lock the tab
 * holds, and a draft that outlives its component.
 */
import { act, cleanup, render, waitFor } from '@testing-library/react';
import { StrictMode, type ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { BatonClient, type WebSocketConstructor } from '@baton/client';
import { BatonProvider, Lockable, useCase, useDraft } from '@baton/react';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, fakeFetch, lockOn, schemaDoc, tokenFor } from '../../../core/test/unit/fakes.js';

const target = card(11, 1);

function setup() {
  FakeSocket.all = [];
  const { fetch, calls } = fakeFetch({
    'GET /schema': () => ({ status: 200, body: schemaDoc }),
    'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
    'POST /locks': () => ({ status: 201, body: lockOn(target, 93) }),
    'DELETE /locks/*': () => ({ status: 204 }),
  });
  // the kit's defaults: no closeDelay
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
  });
  // StrictMode at the root, as an app's entry has it (a testing-library `wrapper` does not double the effects)
  const strict = (children: ReactNode) => (
    <StrictMode>
      <BatonProvider client={client}>{children}</BatonProvider>
    </StrictMode>
  );
  const releases = () => calls.filter((c) => c.method === 'DELETE').map((c) => c.path);
  return { client, strict, releases };
}

const tick = () => act(() => new Promise((r) => setTimeout(r, 20)));

afterEach(() => cleanup());

describe('StrictMode', () => {
  it('a case opened by useCase has one socket', async () => {
    const { client, strict } = setup();
    function Status() {
      return <p>{useCase('demo').status}</p>;
    }
    render(strict(<Status />));
    await tick();
    expect(FakeSocket.all).toHaveLength(1);
    expect(FakeSocket.last.closedWith).toBeNull();
    client.dispose();
  });

  it('<Lockable releaseOnUnmount> mounted while the tab holds the lock keeps it; a real unmount releases it', async () => {
    const { client, strict, releases } = setup();
    await client.locks.acquire(target);
    const view = render(strict(<Lockable record={target} releaseOnUnmount>{(p) => <p>{p.state}</p>}</Lockable>));
    await tick();
    expect(releases()).toEqual([]);
    expect(client.locks.info(target).state).toBe('owned');
    view.unmount();
    await waitFor(() => expect(releases()).toEqual(['/locks/93']));
    client.dispose();
  });

  it('a draft outlives the component that shows it', () => {
    const { client, strict } = setup();
    function Form() {
      const draft = useDraft(target);
      return <textarea readOnly value={draft?.values.content ?? ''} />;
    }
    const first = render(strict(<Form />));
    act(() => {
      client.drafts.open(target, { content: 'card 11' });
      client.drafts.set(target, 'content', 'Half a capt');
    });
    expect(first.container.querySelector('textarea')?.value).toBe('Half a capt');
    first.unmount();
    const again = render(strict(<Form />));
    expect(again.container.querySelector('textarea')?.value).toBe('Half a capt');
    client.dispose();
  });
});
