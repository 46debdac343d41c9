/**
 * Waiting lines: the tabs waiting for a record, first come, first served.
 * baton says a waiter's `position` as of the moment it sends it and sends no
 * frame when others leave, so a client keeps each record's line ordered by
 * waiter id and counts: position = 1 + live waiters of the record with a
 * smaller id.
 */
import type { EndedWaiter, Waiter, WaiterEndReason, Watchable } from './types.js';

/** The watchable as a waiter (a live one, or an ended one from a `destroy` frame), or null. */
export function waiterIn(record: Watchable): Waiter | EndedWaiter | null {
  // sound: only waiters are tagged `Waiter`
  return record.type === 'Waiter' && 'position' in record && 'lockable' in record ? (record as Waiter | EndedWaiter) : null;
}

/** Why a waiter ended, from its `destroy` frame; `left` when the frame does not say. */
export function waiterEnd(waiter: Waiter | EndedWaiter): WaiterEndReason {
  return 'reason' in waiter ? waiter.reason : 'left';
}

/** Waiters in line order (join order: by id). */
export const inLine = (waiters: Waiter[]): Waiter[] => [...waiters].sort((a, b) => a.id - b.id);

/** A waiter's place in its record's line (1 = next), counted from the line as this tab knows it. */
export function positionIn(line: Waiter[], waiter: Waiter): number {
  return 1 + line.filter((w) => w.id < waiter.id).length;
}
