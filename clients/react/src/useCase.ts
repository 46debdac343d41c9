import type { LiveCase, LiveState } from '@baton/client';
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { remember, selectionOf, type Rendered } from './selection.js';
import { useBaton } from './context.js';

const LOADING: LiveState = Object.freeze({
  case: null,
  role: null,
  schema: null,
  records: {},
  children: {},
  locks: [],
  lockOn: {},
  containerLockOn: {},
  waiters: [],
  lineOn: {},
  onlineUsers: [],
  status: 'loading',
  error: null,
});

const noSubscription = () => () => {};

/**
 * Opens a case for as long as the component is mounted and returns its
 * LiveCase (null until it is open). The open handle is the subscription:
 * React opens it on mount and closes it a tick after unmount, so
 * StrictMode's unmount-and-mount-again keeps one connection, whatever the
 * client's `closeDelay`.
 */
export function useLiveCase(slug: string | null): LiveCase | null {
  const client = useBaton();
  const subscribe = useCallback(
    (changed: () => void) => {
      if (!slug) return () => {};
      const handle = client.openCase(slug);
      changed();
      // closed a tick later: StrictMode's unmount and mount again (or a quick remount) keep the one connection
      return () => {
        setTimeout(() => handle.close(), 0);
      };
    },
    [client, slug],
  );
  const get = useCallback(() => (slug ? client.openedCase(slug) : null), [client, slug]);
  return useSyncExternalStore(subscribe, get, get);
}

/**
 * `useSyncExternalStore` with a selector and an equality function: the
 * component re-renders only when what it selected changed (by `isEqual`,
 * `Object.is` by default), not on every change to the case.
 */
export function useSelected<S, T>(
  subscribe: (listener: () => void) => () => void,
  getSnapshot: () => S,
  selector: (snapshot: S) => T,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T {
  // what was rendered last: a new selection equal to it is replaced by it
  const [rendered] = useState<Rendered<T>>(() => ({ has: false, value: undefined }));
  const getSelection = useMemo(() => selectionOf(getSnapshot, selector, isEqual, rendered), [getSnapshot, selector, isEqual, rendered]);
  const value = useSyncExternalStore(subscribe, getSelection, getSelection);
  useEffect(() => remember(rendered, value), [rendered, value]);
  return value;
}

/**
 * A selection of a case that is open already (`useLiveCase`): re-renders
 * only when the selected value changes. The store keeps unchanged records
 * and lists identical, so `(s) => s.children['Project/3']?.Ticket` stays
 * the same array after a frame about another project.
 */
export function useLiveSelector<T>(
  live: LiveCase | null,
  selector: (state: LiveState) => T,
  isEqual?: (a: T, b: T) => boolean,
): T {
  const subscribe = useCallback((cb: () => void) => (live ? live.subscribe(cb) : noSubscription()), [live]);
  const get = useCallback(() => (live ? live.getState() : LOADING), [live]);
  return useSelected(subscribe, get, selector, isEqual);
}

/** Opens a case while mounted and selects from its live state (see `useLiveSelector`). */
export function useCaseSelector<T>(
  slug: string | null,
  selector: (state: LiveState) => T,
  isEqual?: (a: T, b: T) => boolean,
): T {
  return useLiveSelector(useLiveCase(slug), selector, isEqual);
}

const whole = (state: LiveState): LiveState => state;

/**
 * Live data of a case: `{case, role, schema, records (by type), children
 * (by parent and type), locks, lockOn, containerLockOn, lineOn, onlineUsers, status,
 * error}`, re-rendered on every change
 * anyone makes. `status` is `loading`, `live`, `reconnecting` or `stopped`
 * (then `error` says why: signed out, kicked, the case was deleted).
 * To re-render only for part of it, use `useCaseSelector`.
 */
export function useCase(slug: string | null): LiveState {
  return useCaseSelector(slug, whole);
}
