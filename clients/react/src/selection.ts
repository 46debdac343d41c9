/**
 * The memo behind `useSelected`: a `getSnapshot` for `useSyncExternalStore`
 * that returns the previous selection while the store's snapshot is the
 * same, or while the new selection is equal to it, so React bails out.
 * Kept out of the hook: it is state across calls by design, as in React's
 * own `use-sync-external-store/with-selector`.
 */
export interface Rendered<T> {
  has: boolean;
  value: T | undefined;
}

export function selectionOf<S, T>(
  getSnapshot: () => S,
  selector: (snapshot: S) => T,
  isEqual: (a: T, b: T) => boolean,
  rendered: Rendered<T>,
): () => T {
  let memo: { snapshot: S; selection: T } | null = null;
  return () => {
    const snapshot = getSnapshot();
    if (memo && Object.is(memo.snapshot, snapshot)) return memo.selection;
    let selection = selector(snapshot);
    // sound: `value` is set whenever `has` is
    const previous = memo ? memo.selection : rendered.has ? (rendered.value as T) : undefined;
    if ((memo || rendered.has) && isEqual(previous as T, selection)) selection = previous as T;
    memo = { snapshot, selection };
    return selection;
  };
}

/** After a commit: what the component rendered, for the next selection to compare with. */
export function remember<T>(rendered: Rendered<T>, value: T): void {
  rendered.has = true;
  rendered.value = value;
}
