import { BatonClient } from '@baton/client';

const TOKEN_KEY = 'baton.token';

function storedToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** The tab's client: same origin, its own session id (in sessionStorage), the signed-in token. */
// a case closed by React's StrictMode or a quick navigation and opened again at once keeps its connection
export const baton = new BatonClient({ token: storedToken(), closeDelay: 500 });

/** Keeps the token for the next visit (every tab of this browser shares it). */
export function rememberToken(token: string | null): void {
  baton.setToken(token);
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // private mode: the token lives as long as the tab
  }
}
