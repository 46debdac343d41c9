import type { LiveCase, LiveState } from '@baton/client';
import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';
import { useBaton } from './context.js';

const LOADING: LiveState = Object.freeze({
  case: null,
  role: null,
  schema: null,
  records: {},
  children: {},
  locks: [],
  lockOn: {},
  coverOn: {},
  waiters: [],
  lineOn: {},
  onlineUsers: [],
  status: 'loading',
  error: null,
}) as LiveState;

const noSubscription = () => () => {};

/** Opens a case for as long as the component is mounted and returns its LiveCase. */
export function useLiveCase(slug: string | null): LiveCase | null {
  const client = useBaton();
  const [live, setLive] = useState<LiveCase | null>(null);
  useEffect(() => {
    if (!slug) {
      setLive(null);
      return;
    }
    const handle = client.openCase(slug);
    setLive(handle.live);
    return () => handle.close();
  }, [client, slug]);
  return live && live.slug === slug ? live : null;
}

/**
 * Live data of a case: `{case, role, schema, records (by type), children
 * (by parent and type), locks, lockOn, coverOn, lineOn, onlineUsers, status,
 * error}`, re-rendered on every change
 * anyone makes. `status` is `loading`, `live`, `reconnecting` or `stopped`
 * (then `error` says why: signed out, kicked, the case was deleted).
 */
export function useCase(slug: string | null): LiveState {
  const live = useLiveCase(slug);
  const subscribe = useCallback((cb: () => void) => (live ? live.subscribe(cb) : noSubscription()), [live]);
  const get = useCallback(() => (live ? live.getState() : LOADING), [live]);
  return useSyncExternalStore(subscribe, get, get);
}
