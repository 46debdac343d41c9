export { BatonProvider, useAuthError, useBaton, type BatonProviderProps } from './context.js';
export { useCase, useCaseSelector, useLiveCase, useLiveSelector, useSelected } from './useCase.js';
export { useLock, type UseLock } from './useLock.js';
export { usePresence } from './usePresence.js';
export { Lockable, type LockableProps, type LockableRenderProps } from './Lockable.js';
export { useDragLock, type MoveTarget, type UseDragLock } from './useDragLock.js';
export { useDraft, useDrafts } from './useDraft.js';
