/**
 * Where a moved record goes, as sort keys. baton sorts siblings by
 * `position`, then `id`: the app chooses the keys.
 *
 * The rule: the moved record gets a key that sorts it between its new
 * neighbours when one exists (one PATCH, the record's own, under its lock);
 * when none does (the neighbours' keys are adjacent), the target's children
 * are renumbered 0, 10, 20, … in the new order: the moved record first, then
 * each other one whose key changes. The gaps of 10 let the next moves there
 * take one PATCH again. Keys are never negative (baton refuses them).
 */

/** A record as its parent orders it. */
export interface Slot {
  id: number;
  position: number;
}

export interface MovePlan {
  /** The moved record's new key. */
  position: number;
  /** Other children of the target whose key changes (a renumbering), in order. */
  renumber: Slot[];
}

/** The renumbering step: room for nine moves between two records before the next renumbering. */
export const STEP = 10;

const before = (a: Slot, b: Slot): boolean => a.position < b.position || (a.position === b.position && a.id < b.id);

/**
 * Puts `card` (the moved record) at `index` among `target` (the target's
 * children in order, without it): 0 is first, `target.length` last.
 */
export function planMove(card: Slot, target: Slot[], index: number): MovePlan {
  const others = target.filter((s) => s.id !== card.id);
  const at = Math.max(0, Math.min(index, others.length));
  const prev = others[at - 1];
  const next = others[at];
  const fits = (position: number): boolean => {
    const slot = { id: card.id, position };
    return position >= 0 && (!prev || before(prev, slot)) && (!next || before(slot, next));
  };
  const candidates: number[] = [];
  if (prev && next) candidates.push(Math.floor((prev.position + next.position) / 2));
  if (prev) candidates.push(prev.position + (next ? 1 : STEP), prev.position);
  if (next) candidates.push(next.position - STEP, next.position - 1, next.position);
  if (!prev && !next) candidates.push(0);
  const position = candidates.find(fits);
  if (position !== undefined) return { position, renumber: [] };

  const order = [...others.slice(0, at), card, ...others.slice(at)];
  const renumber: Slot[] = [];
  let moved = 0;
  order.forEach((slot, i) => {
    const key = i * STEP;
    if (slot.id === card.id) moved = key;
    else if (slot.position !== key) renumber.push({ id: slot.id, position: key });
  });
  return { position: moved, renumber };
}

/** Whether a record would change place at all: same parent, and the same neighbours. */
export function staysPut(card: Slot, fromParentId: number, toParentId: number, siblings: Slot[], index: number): boolean {
  if (fromParentId !== toParentId) return false;
  const current = siblings.findIndex((s) => s.id === card.id);
  // `index` counts the siblings without the moved one
  return current === index;
}
