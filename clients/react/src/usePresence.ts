import type { LiveState, OnlineUser } from '@baton/client';
import { useCaseSelector } from './useCase.js';

const presence = (state: LiveState): OnlineUser[] => state.onlineUsers;

/** Who has the case open now: `[{user, color, sessions}]`, live; re-renders only when presence changes. */
export function usePresence(slug: string | null): OnlineUser[] {
  return useCaseSelector(slug, presence);
}
