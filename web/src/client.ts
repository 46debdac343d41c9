import { BatonClient, tokenTimes, tokenUserId, type TokenRequest } from '@baton/client';

const TOKEN_KEY = 'baton.token';

function storedToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Asks the person for a fresh token (the password dialog), while someone is signed in. */
export type Renewer = (request: TokenRequest) => Promise<string | null>;
let renewer: Renewer | null = null;

/** Who gives a fresh token when the kit asks for one (null: nobody; the kit signs the tab out). */
export function renewTokensWith(next: Renewer | null): void {
  renewer = next;
}

/** A token another tab of this browser stored (it signed in again, as the same person), when it differs from `current` and still lasts. */
function fresherStored(current: string | null): string | null {
  const stored = storedToken();
  if (!stored || stored === current) return null;
  // another person signed in in another tab: not this tab's to take
  if (tokenUserId(stored) !== tokenUserId(current)) return null;
  const { exp } = tokenTimes(stored);
  return exp === null || exp * 1000 > Date.now() + 5_000 ? stored : null;
}

/** The kit's `getToken`: another tab's fresh sign-in, else (when a new token is needed) the person's password. */
function getToken(request: TokenRequest): Promise<string | null> | string | null {
  const other = fresherStored(request.current);
  if (other) return other;
  // a reconnect is fine with the token in use; if it has ended, baton's 401 asks again
  if (request.reason === 'reconnect') return request.current;
  return renewer ? renewer(request) : null;
}

/** The tab's client: same origin, its own session id (in sessionStorage), the signed-in token. */
// a case closed by React's StrictMode or a quick navigation and opened again at once keeps its connection
export const baton = new BatonClient({ token: storedToken(), closeDelay: 500, getToken });

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
