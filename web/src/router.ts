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

const subscribe = (cb: () => void) => {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
};
const getHash = () => window.location.hash;

export function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, getHash, getHash));
}
