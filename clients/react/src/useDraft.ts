import type { Draft, TargetRef } from '@baton/client';
import { useCallback, useSyncExternalStore } from 'react';
import { useBaton } from './context.js';
import { useSelected } from './useCase.js';

/**
 * A record's draft, kept by the kit (`client.drafts`), live: the component
 * re-renders when this record's draft changes, not another's. The draft
 * outlives the component: a form that unmounts (scrolled out of a long
 * list, StrictMode's second mount) finds its text again. Start one with
 * `client.drafts.open(record, initial)`, type with `set`, end it with
 * `discard`.
 */
export function useDraft(record: TargetRef | null): Draft | undefined {
  const client = useBaton();
  const key = record ? `${record.type}/${record.param}` : null;
  const get = useCallback(() => (key ? client.drafts.get(key) : undefined), [client, key]);
  return useSyncExternalStore(client.drafts.subscribe, get, get);
}

/**
 * A selection of the tab's drafts (every draft, in the order they started):
 * re-renders only when the selection changes (by `isEqual`, `Object.is` by
 * default), e.g. `useDrafts((ds) => ds.some((d) => d.changed.length > 0))`.
 */
export function useDrafts<T>(selector: (drafts: readonly Draft[]) => T, isEqual?: (a: T, b: T) => boolean): T {
  const client = useBaton();
  return useSelected(client.drafts.subscribe, client.drafts.all, selector, isEqual);
}
