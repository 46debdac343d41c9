import { useSyncExternalStore } from 'react';

/** The app's screens. Routes live in the hash so they never collide with API paths. */
export type Route =
  | { name: 'cases' }
  | { name: 'case'; slug: string }
  | { name: 'audit'; slug: string }
  | { name: 'admin' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'cases' && parts[1]) return parts[2] === 'audit' ? { name: 'audit', slug: parts[1] } : { name: 'case', slug: parts[1] };
  if (parts[0] === 'admin') return { name: 'admin' };
  return { name: 'cases' };
}

export function href(route: Route): string {
  switch (route.name) {
    case 'cases':
      return '#/';
    case 'case':
      return `#/cases/${encodeURIComponent(route.slug)}`;
    case 'audit':
      return `#/cases/${encodeURIComponent(route.slug)}/audit`;
    case 'admin':
      return '#/admin';
  }
}

/** Asked before the route changes: false keeps the current one (e.g. the person chose to keep a draft). */
type Guard = (from: Route, to: Route) => boolean;
let guard: Guard | null = null;
let shown = typeof window === 'undefined' ? '' : window.location.hash;

/** Sets the question asked before the route changes (null: none). */
export function guardLeaving(next: Guard | null): void {
  guard = next;
}

if (typeof window !== 'undefined') {
  // registered before any component's listener: a refused change is undone before anything renders it
  window.addEventListener('hashchange', () => {
    const next = window.location.hash;
    if (next === shown) return;
    if (guard && !guard(parseRoute(shown), parseRoute(next))) {
      history.replaceState(history.state, '', shown || '#/');
      return;
    }
    shown = next;
  });
}

const subscribe = (cb: () => void) => {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
};
const getHash = () => window.location.hash;

export function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, getHash, getHash));
}
