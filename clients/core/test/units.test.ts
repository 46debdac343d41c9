import { describe, expect, it } from 'vitest';
import {
  CaseStore,
  LockHeldError,
  RateLimitedError,
  backoffDelay,
  errorFromResponse,
  parseFrame,
  tabSessionId,
} from '../src/index.js';
import { MemoryStorage } from '../../test/support.js';

describe('frames', () => {
  it('ignores frames it does not know instead of throwing', () => {
    expect(parseFrame('{"type":"hologram","data":1}')).toBeNull();
    expect(parseFrame('not json')).toBeNull();
    expect(parseFrame('[1,2]')).toBeNull();
    expect(parseFrame('null')).toBeNull();
    expect(parseFrame('{"type":"resync","missed":3}')).toEqual({ type: 'resync', missed: 3 });
  });

  it('a store ignores a change frame without an identity', () => {
    const store = new CaseStore();
    store.apply({ type: 'update', watchable: {} as never, editorSessionId: null });
    expect(store.getView().pages).toEqual([]);
  });
});

describe('backoff', () => {
  it('doubles up to the maximum, with jitter in the upper half', () => {
    const opts = { initialDelay: 100, maxDelay: 1000 };
    expect(backoffDelay(0, opts, () => 0)).toBe(50);
    expect(backoffDelay(0, opts, () => 1)).toBe(100);
    expect(backoffDelay(3, opts, () => 1)).toBe(800);
    expect(backoffDelay(10, opts, () => 1)).toBe(1000);
    expect(backoffDelay(10, opts, () => 0)).toBe(500);
  });
});

describe('errors', () => {
  it('maps codes to typed errors', () => {
    const headers = new Headers({ 'Retry-After': '7' });
    const limited = errorFromResponse(429, { error: { code: 'rate_limited', message: 'slow down' } }, headers);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited as RateLimitedError).retryAfter).toBe(7);
    const held = errorFromResponse(409, { error: { code: 'lock_held', message: 'held', lock: { token: '4' } } }, headers);
    expect(held).toBeInstanceOf(LockHeldError);
    expect((held as LockHeldError).lock.token).toBe('4');
  });
});

describe('session id', () => {
  it('is made once per tab storage and kept', () => {
    const storage = new MemoryStorage();
    const id = tabSessionId(storage);
    expect(tabSessionId(storage)).toBe(id);
    expect(tabSessionId(new MemoryStorage())).not.toBe(id);
  });
});
