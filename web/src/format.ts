import { BatonError, type Role } from '@baton/client';

/** "Alice Smith" → "AS", "bob" → "B". */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0], words[words.length - 1]] : words;
  return letters.map((w) => (w ?? '').charAt(0).toUpperCase()).join('') || '?';
}

export function time(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function message(error: unknown): string {
  if (error instanceof BatonError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

const RANK: Record<Role, number> = { reader: 0, editor: 1, manager: 2, 'site admin': 3 };

export function canEdit(role: Role | null): boolean {
  return role !== null && RANK[role] >= RANK.editor;
}

export function isManager(role: Role | null): boolean {
  return role !== null && RANK[role] >= RANK.manager;
}

/** Whether a type's `lock.takeover` (`editor`, `manager` or `none`) lets this role "Edit anyway". */
export function mayTakeOver(role: Role | null, policy: string): boolean {
  if (role === null || policy === 'none') return false;
  return policy === 'manager' ? RANK[role] >= RANK.manager : RANK[role] >= RANK.editor;
}

/** 1 → "1st", 2 → "2nd", 3 → "3rd", 11 → "11th", 22 → "22nd". */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
