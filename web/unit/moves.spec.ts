/**
 * Where a moved card goes (src/moves.ts): one key between its new
 * neighbours when there is room, else the target page renumbered.
 */
import { expect, test } from '@playwright/test';
import { STEP, planMove, staysPut, type Slot } from '../src/moves';

const slot = (id: number, position: number): Slot => ({ id, position });
/** The page's order after the plan is applied: by position, then id. */
function apply(card: Slot, target: Slot[], index: number): number[] {
  const plan = planMove(card, target, index);
  const keys = new Map(target.map((s) => [s.id, s.position]));
  for (const s of plan.renumber) keys.set(s.id, s.position);
  keys.set(card.id, plan.position);
  return [...keys.entries()]
    .sort(([ia, pa], [ib, pb]) => pa - pb || ia - ib)
    .map(([id]) => id);
}

test('an empty page: key 0', () => {
  expect(planMove(slot(5, 3), [], 0)).toEqual({ position: 0, renumber: [] });
});

test('last on a page: one key after the last card, nothing renumbered', () => {
  const target = [slot(1, 0), slot(2, 1)];
  expect(planMove(slot(9, 0), target, 2)).toEqual({ position: 1 + STEP, renumber: [] });
  expect(apply(slot(9, 0), target, 2)).toEqual([1, 2, 9]);
});

test('between two cards with room: the midpoint', () => {
  const target = [slot(1, 0), slot(2, 20)];
  expect(planMove(slot(9, 0), target, 1)).toEqual({ position: 10, renumber: [] });
});

test('between adjacent keys: the id breaks the tie when it can', () => {
  // card 9 sorts after card 1 at key 0 (9 > 1), and before card 2 at key 1
  expect(planMove(slot(9, 5), [slot(1, 0), slot(2, 1)], 1)).toEqual({ position: 0, renumber: [] });
});

test('first, before key 0 of a smaller id: the page is renumbered 0, 10, 20 in the new order', () => {
  const target = [slot(1, 0), slot(2, 1)];
  const plan = planMove(slot(9, 2), target, 0);
  expect(plan).toEqual({ position: 0, renumber: [slot(1, 10), slot(2, 20)] });
  expect(apply(slot(9, 2), target, 0)).toEqual([9, 1, 2]);
});

test('move up within a page (the card left out of the target): before its upper neighbour', () => {
  // page [1@0, 2@1, 3@2]: card 3 up one → between 1 and 2
  expect(apply(slot(3, 2), [slot(1, 0), slot(2, 1)], 1)).toEqual([1, 3, 2]);
  // card 2 up one → first, before card 1 (key 0, smaller id): renumbered
  expect(apply(slot(2, 1), [slot(1, 0), slot(3, 2)], 0)).toEqual([2, 1, 3]);
  // move down: card 1 below card 2
  expect(apply(slot(1, 0), [slot(2, 1), slot(3, 2)], 1)).toEqual([2, 1, 3]);
});

test('every place in a crowded page of equal keys comes out in order', () => {
  const target = [slot(4, 7), slot(2, 7), slot(6, 7), slot(3, 8)].sort((a, b) => a.position - b.position || a.id - b.id);
  for (let index = 0; index <= target.length; index++) {
    const order = apply(slot(5, 0), target, index);
    const expected = target.map((s) => s.id);
    expected.splice(index, 0, 5);
    expect(order).toEqual(expected);
    expect(planMove(slot(5, 0), target, index).position).toBeGreaterThanOrEqual(0);
  }
});

test('staysPut: the same page and the same place is no move', () => {
  const page = [slot(1, 0), slot(2, 1), slot(3, 2)];
  expect(staysPut(slot(2, 1), 7, 7, page, 1)).toBe(true);
  expect(staysPut(slot(2, 1), 7, 7, page, 0)).toBe(false);
  expect(staysPut(slot(2, 1), 7, 8, page, 1)).toBe(false);
});
