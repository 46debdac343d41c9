import type { ErrorBody, Lock, Lockable, User } from './types.js';
import { fromWire } from './wire.js';

/** The `error` object of an error response (`code` may be one this client does not know yet). */
export type ErrorInfo = Omit<ErrorBody['error'], 'code' | 'current'> & { code: string; current?: Lockable };

/** Every failure the client reports is a BatonError: never a bare status code. */
export class BatonError extends Error {
  override name = 'BatonError';
  /** The server's error code (`lock_held`, `locked`, …) or `network`. */
  readonly code: string;
  /** The HTTP status, 0 when no response arrived. */
  readonly status: number;
  readonly body: ErrorInfo | undefined;
  /** Seconds the server asked the client to wait before trying again (`Retry-After` on a 429 or 503), else null. */
  retryAfter: number | null = null;

  constructor(code: string, status: number, message: string, body?: ErrorInfo) {
    super(message);
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

/** An error body that carries `lock`. */
export type WithLock = ErrorInfo & { lock: Lock };
/** An error body that carries `current`. */
export type WithCurrent = ErrorInfo & { current: Lockable };

/** Each user once, in the order of the locks they hold. */
function holdersOf(locks: Lock[]): User[] {
  const seen = new Map<number, User>();
  for (const { user } of locks) if (!seen.has(user.id)) seen.set(user.id, user);
  return [...seen.values()];
}

/**
 * 409 `lock_held`: someone else holds the lock; `lock` says who and since
 * when. For a lock set or a deep lock, `locks` is every lock in the way
 * (and `holders` everyone holding one); for one record, just `[lock]`.
 * A record inside someone else's deep lock is refused with that deep lock.
 */
export class LockHeldError extends BatonError {
  override name = 'LockHeldError';
  readonly lock: Lock;
  readonly locks: Lock[];
  constructor(status: number, body: WithLock) {
    super('lock_held', status, body.message, body);
    this.lock = body.lock;
    this.locks = body.locks?.length ? body.locks : [body.lock];
  }
  get holder(): User {
    return this.lock.user;
  }
  /** Everyone whose lock is in the way, each once. */
  get holders(): User[] {
    return holdersOf(this.locks);
  }
}

/** 409 `none_free`: a claim found every candidate held; `locks` are the locks in the way. */
export class NoneFreeError extends BatonError {
  override name = 'NoneFreeError';
  readonly locks: Lock[];
  constructor(status: number, body: ErrorInfo) {
    super('none_free', status, body.message, body);
    this.locks = body.locks ?? [];
  }
  get holders(): User[] {
    return holdersOf(this.locks);
  }
}

/**
 * 423 `locked`: a save was refused because someone else holds the record's
 * lock, or a deep lock on one of its containers (then `lockable` is that
 * record or case, and `lock.depth` is `infinity`).
 */
export class LockedError extends BatonError {
  override name = 'LockedError';
  readonly lock: Lock;
  readonly lockable: Lockable | undefined;
  constructor(status: number, body: WithLock) {
    super('locked', status, body.message, body);
    this.lock = body.lock;
    this.lockable = body.lockable;
  }
  get holder(): User {
    return this.lock.user;
  }
}

/** 412 `stale_version`: the record changed since this tab saw it; `current` is the record now. */
export class StaleVersionError extends BatonError {
  override name = 'StaleVersionError';
  readonly current: Lockable;
  constructor(status: number, body: WithCurrent) {
    super('stale_version', status, body.message, body);
    this.current = body.current;
  }
}

/** 412 `lock_lost`: the lock this tab saved under is gone (overridden, expired, released). */
export class LockLostError extends BatonError {
  override name = 'LockLostError';
  readonly current: Lockable;
  constructor(status: number, body: WithCurrent) {
    super('lock_lost', status, body.message, body);
    this.current = body.current;
  }
}

/** 403 `outranked`: "Edit anyway" or a lock break refused; the holder's role is higher. */
export class OutrankedError extends BatonError {
  override name = 'OutrankedError';
  readonly lock: Lock;
  constructor(status: number, body: WithLock) {
    super('outranked', status, body.message, body);
    this.lock = body.lock;
  }
}

/** 429 `rate_limited`; `retryAfter` in seconds when the server said. */
export class RateLimitedError extends BatonError {
  override name = 'RateLimitedError';
  constructor(status: number, body: ErrorInfo, retryAfter: number | null) {
    super('rate_limited', status, body.message, body);
    this.retryAfter = retryAfter;
  }
}

/** 401: the token is missing, expired, revoked or the credentials are wrong. Sign in again. */
export class UnauthorizedError extends BatonError {
  override name = 'UnauthorizedError';
}

/** 403 `forbidden`. */
export class ForbiddenError extends BatonError {
  override name = 'ForbiddenError';
}

/** 404: the record or case does not exist (any more). */
export class NotFoundError extends BatonError {
  override name = 'NotFoundError';
}

/** 422 `invalid` and 400 `bad_request`; `fields` names each field that broke its schema, with why. */
export class InvalidError extends BatonError {
  override name = 'InvalidError';
  get fields(): { field: string; message: string }[] {
    return this.body?.fields ?? [];
  }
}

/** 409 `conflict` (e.g. a slug already taken). */
export class ConflictError extends BatonError {
  override name = 'ConflictError';
}

/** No response: the server is down, the network is gone, or the request was aborted. */
export class NetworkError extends BatonError {
  override name = 'NetworkError';
  override readonly cause: unknown;
  constructor(message: string, cause?: unknown, code = 'network') {
    super(code, 0, message);
    this.cause = cause;
  }
}

/** A request that had no complete answer within its timeout (default 10 s): it may or may not have reached baton. */
export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
  constructor(message: string, cause?: unknown) {
    super(message, cause, 'timeout');
  }
}

function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** The `error` of an error body, once its `code` and `message` are strings (every error answer of the document is one). */
function errorInfo(status: number, payload: unknown): ErrorInfo {
  if (payload && typeof payload === 'object' && 'error' in payload) {
    const { error } = payload;
    if (
      error &&
      typeof error === 'object' &&
      'code' in error &&
      typeof error.code === 'string' &&
      'message' in error &&
      typeof error.message === 'string'
    ) {
      return fromWire<ErrorInfo>(error);
    }
  }
  return { code: 'http_' + status, message: `HTTP ${status}` };
}

/** The typed error for an error response. */
export function errorFromResponse(
  status: number,
  payload: unknown,
  headers: { get(name: string): string | null },
): BatonError {
  const body = errorInfo(status, payload);
  const { code, message, lock, current } = body;
  // each carries what its code promises; without it, the error is the plain one for its status
  if (lock && code === 'lock_held') return new LockHeldError(status, { ...body, lock });
  if (lock && (code === 'locked' || status === 423)) return new LockedError(status, { ...body, lock });
  if (code === 'none_free') return new NoneFreeError(status, body);
  if (lock && code === 'outranked') return new OutrankedError(status, { ...body, lock });
  if (current && code === 'stale_version') return new StaleVersionError(status, { ...body, current });
  if (current && code === 'lock_lost') return new LockLostError(status, { ...body, current });
  switch (status) {
    case 401:
      return new UnauthorizedError(code, status, message, body);
    case 403:
      return new ForbiddenError(code, status, message, body);
    case 404:
      return new NotFoundError(code, status, message, body);
    case 400:
    case 422:
      return new InvalidError(code, status, message, body);
    case 409:
      return new ConflictError(code, status, message, body);
    case 429:
      return new RateLimitedError(status, body, parseRetryAfter(headers.get('Retry-After')));
  }
  const error = new BatonError(code, status, message, body);
  error.retryAfter = parseRetryAfter(headers.get('Retry-After'));
  return error;
}

/** Errors after which retrying the same request or reconnecting cannot help. */
export function isFatal(error: unknown): error is UnauthorizedError | ForbiddenError | NotFoundError {
  return (
    error instanceof UnauthorizedError ||
    error instanceof ForbiddenError ||
    error instanceof NotFoundError
  );
}
