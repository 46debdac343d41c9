/**
 * How often each record's component rendered, for the end-to-end render
 * count: counted only when the page set `window.__batonRenders` to an
 * object before the app started (the tests do; nothing else does).
 */
export function countRender(key: string): void {
  const counts = (globalThis as { __batonRenders?: Record<string, number> }).__batonRenders;
  if (counts && typeof counts === 'object') counts[key] = (counts[key] ?? 0) + 1;
}
