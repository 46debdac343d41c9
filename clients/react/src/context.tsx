import type { BatonClient } from '@baton/client';
import { createContext, useContext, useEffect, type ReactNode } from 'react';

const BatonContext = createContext<BatonClient | null>(null);

export interface BatonProviderProps {
  client: BatonClient;
  children?: ReactNode;
}

/** Makes a BatonClient available to the hooks below it. */
export function BatonProvider({ client, children }: BatonProviderProps) {
  return <BatonContext.Provider value={client}>{children}</BatonContext.Provider>;
}

/** The BatonClient of the nearest <BatonProvider>. */
export function useBaton(): BatonClient {
  const client = useContext(BatonContext);
  if (!client) throw new Error('useBaton: wrap the app in <BatonProvider client={…}>');
  return client;
}

/** Calls `listener` whenever the token is refused (expired, revoked): send the person to sign in. */
export function useAuthError(listener: (error: Error) => void): void {
  const client = useBaton();
  useEffect(() => client.onAuthError(listener), [client, listener]);
}
