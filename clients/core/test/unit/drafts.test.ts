/**
 * Drafts live in the kit, keyed by record, outside any component: what a
 * person typed survives the component that showed it, typing renews the
 * lock's activity, and leaving the page asks while a draft has changes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonClient, DraftStore, type WebSocketConstructor } from '../../src/index.js';
import { MemoryStorage } from '../../../test/support.js';
import { FakeSocket, ME, SESSION, card, caseDetail, fakeFetch, lockOn, schemaDoc, tokenFor } from './fakes.js';

const note = card(11, 1);

describe('a draft', () => {
  it('starts from the record, follows the typing, and says which fields changed', () => {
    const drafts = new DraftStore();
    const seen: number[] = [];
    drafts.subscribe(() => seen.push(drafts.all().length));
    const opened = drafts.open(note, { content: 'card 11', title: 'A' });
    expect(drafts.open(note, { content: 'something else' })).toBe(opened);
    expect(opened.changed).toEqual([]);
    expect(drafts.hasChanges).toBe(false);
    const typed = drafts.set(note, 'content', 'Half a capt')!;
    expect(typed).not.toBe(opened);
    expect(typed.values).toEqual({ content: 'Half a capt', title: 'A' });
    expect(typed.changed).toEqual(['content']);
    expect(drafts.get('Card/11')).toBe(typed);
    expect(drafts.withChanges()).toEqual([typed]);
    // typing it back is no change
    expect(drafts.set(note, 'content', 'card 11')!.changed).toEqual([]);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('rebased on a newer version keeps what the person changed, and only that', () => {
    const drafts = new DraftStore();
    drafts.open(note, { content: 'card 11', title: 'A' });
    drafts.set(note, 'title', 'Mine');
    const newer = card(11, 1, 3, 'changed by Bob');
    const moved = drafts.rebase(newer, { content: 'changed by Bob', title: 'A' })!;
    expect(moved.base).toBe(newer);
    expect(moved.values).toEqual({ content: 'changed by Bob', title: 'Mine' });
    expect(moved.changed).toEqual(['title']);
    const over = drafts.restart(newer, { content: 'changed by Bob', title: 'A' });
    expect(over.changed).toEqual([]);
    expect(drafts.discard(note)).toBe(true);
    expect(drafts.get(note)).toBeUndefined();
    expect(drafts.all()).toEqual([]);
  });

  it('leaving the page asks only while a draft has changes, and listens only then', () => {
    const page = new EventTarget();
    const add = vi.spyOn(page, 'addEventListener');
    const drafts = new DraftStore();
    const stop = drafts.askBeforeUnload(page);
    const leave = () => {
      const event = new Event('beforeunload', { cancelable: true });
      page.dispatchEvent(event);
      return event.defaultPrevented;
    };
    drafts.open(note, { content: 'card 11' });
    expect(leave()).toBe(false);
    expect(add).not.toHaveBeenCalled();
    drafts.set(note, 'content', 'unsaved');
    expect(leave()).toBe(true);
    drafts.discard(note);
    expect(leave()).toBe(false);
    drafts.open(note, { content: 'card 11' });
    drafts.set(note, 'content', 'unsaved');
    stop();
    expect(leave()).toBe(false);
  });
});

describe('typing in a draft is activity', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('renews the held lock at most once a minute, only after input', async () => {
    FakeSocket.all = [];
    const { fetch, calls } = fakeFetch({
      'GET /schema': () => ({ status: 200, body: schemaDoc }),
      'GET /cases/demo': () => ({ status: 200, body: caseDetail() }),
      'POST /locks': () => ({ status: 201, body: lockOn(note, 77) }),
      'POST /locks/*': () => ({ status: 200, body: lockOn(note, 77) }),
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
    });
    client.openCase('demo');
    FakeSocket.last.welcome();
    await vi.advanceTimersByTimeAsync(0);
    await client.locks.acquire(note);
    client.drafts.open(note, { content: 'card 11' });
    const refreshes = () => calls.filter((c) => c.path === '/locks/77/refresh').length;
    client.drafts.set(note, 'content', 'a');
    await vi.advanceTimersByTimeAsync(30_000);
    client.drafts.set(note, 'content', 'ab');
    expect(refreshes()).toBe(0);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(refreshes()).toBe(1);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(refreshes()).toBe(1);
    client.dispose();
  });
});
