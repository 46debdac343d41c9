/** The minimal part of the Web Storage API the client uses. */
export interface SessionStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export const SESSION_KEY = 'baton.sessionId';

function uuid(): string {
  const c = typeof crypto === 'undefined' ? undefined : crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function defaultStore(): SessionStore | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
  } catch {
    return undefined; // storage disabled (privacy mode, sandboxed iframe)
  }
}

/**
 * The tab's session id: made once per tab and kept in `sessionStorage`, so a
 * reload keeps the same id (and, within the disconnect grace, its locks).
 * Without storage the id lives as long as the page.
 */
export function tabSessionId(store: SessionStore | undefined = defaultStore()): string {
  try {
    const existing = store?.getItem(SESSION_KEY);
    if (existing) return existing;
    const id = uuid();
    store?.setItem(SESSION_KEY, id);
    return id;
  } catch {
    return uuid();
  }
}
