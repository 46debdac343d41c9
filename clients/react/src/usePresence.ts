import type { OnlineUser } from '@baton/client';
import { useCase } from './useCase.js';

/** Who has the case open now: `[{user, color, sessions}]`, live. */
export function usePresence(slug: string | null): OnlineUser[] {
  return useCase(slug).onlineUsers;
}
