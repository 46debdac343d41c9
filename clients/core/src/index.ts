export { BatonClient, tokenTimes, tokenUserId, type BatonClientOptions, type CaseHandle, type MoveTarget, type TokenRequest } from './client.js';
export { DraftStore, type Draft, type DraftBase, type DraftStoreOptions } from './drafts.js';
export { Api, recordPath, type LockOptions, type ParentRef, type SaveOptions } from './api.js';
export { Schema } from './schema.js';
export {
  fillPath,
  type Method,
  type Operation,
  type PathsFor,
  type RouteArgs,
  type RouteData,
  type RouteInit,
} from './routes.js';
export {
  EditsChannel,
  KickedError,
  backoffDelay,
  parseFrame,
  retryAfterMs,
  type Backoff,
  type ChannelOptions,
  type NetworkSignals,
  type ChannelStatus,
  type WebSocketConstructor,
  type WebSocketLike,
} from './channel.js';
export {
  BatonError,
  ConflictError,
  ForbiddenError,
  InvalidError,
  LockHeldError,
  LockLostError,
  LockedError,
  NetworkError,
  NoneFreeError,
  NotFoundError,
  OutrankedError,
  RateLimitedError,
  StaleVersionError,
  TimeoutError,
  UnauthorizedError,
  errorFromResponse,
  isFatal,
  type ErrorInfo,
} from './errors.js';
export { DEFAULT_TIMEOUT, Transport, type FetchLike, type Reply, type RequestOptions, type TransportOptions } from './http.js';
export { LiveCase, type LiveState, type LiveStatus } from './live.js';
export { CancelledError, LockManager, endReason, type LockInfo, type LockState } from './locks.js';
export { inLine, positionIn, waiterEnd, waiterIn } from './line.js';
export {
  SESSION_CHANNEL,
  SESSION_KEY,
  TabSession,
  tabSessionId,
  type BroadcastConstructor,
  type BroadcastLike,
  type SessionStore,
  type TabSessionOptions,
} from './session.js';
export { CaseStore, keyOf, lockIn, recordIn, type CaseView, type Listener } from './store.js';
export type * from './types.js';
