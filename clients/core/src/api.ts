import { InvalidError } from './errors.js';
import type { Reply, Transport } from './http.js';
import {
  fillPath,
  type AnyRouteInit,
  type Method,
  type Operation,
  type PathsFor,
  type RouteArgs,
  type RouteData,
} from './routes.js';
import type {
  Card,
  Case,
  CaseDetail,
  DemoPeople,
  Edgenote,
  Identity,
  Lock,
  LockDepth,
  LockEvent,
  LockStatus,
  LockableType,
  Login,
  Waiter,
  Membership,
  NewCardFields,
  NewCaseFields,
  NewEdgenoteFields,
  NewPageFields,
  NewUserFields,
  Page,
  RecordKey,
  Role,
  Session,
  UpdateFields,
  User,
} from './types.js';

/** Identifies a lockable: a record, or just its `type` and `param`. */
export type LockableRef = Pick<RecordKey, 'type' | 'param'>;

export interface LockOptions {
  /** "Edit anyway": take the lock over from its holder. */
  takeover?: boolean;
  /** `infinity`: lock a page with its cards, or a case with everything in it (default `0`). */
  depth?: LockDepth;
}

export interface SaveOptions {
  /** The version this tab last saw: sent as `If-Match`. */
  ifMatch?: number | null;
  /** The tab's lock on the record: sent as `Lock-Token`. */
  lockToken?: string | null;
}

type RecordRef = Pick<RecordKey, 'type' | 'param'> & { slug?: unknown };

/** The types baton locks, each once: the document's `LockableType`, checked both ways. */
const LOCKABLE_TYPES: { readonly [T in LockableType]: T } = {
  Case: 'Case',
  Page: 'Page',
  Card: 'Card',
  Edgenote: 'Edgenote',
};

/** The type of a record baton locks; `undefined` for any other. */
export function lockableType(type: string): LockableType | undefined {
  return Object.values(LOCKABLE_TYPES).find((known) => known === type);
}

function lockable(record: Pick<RecordKey, 'type'>): LockableType {
  const type = lockableType(record.type);
  if (!type) throw new InvalidError('invalid', 0, `baton locks Case, Page, Card and Edgenote records, not ${record.type}`);
  return type;
}

/** A lockable as lock requests name it. */
const lockRef = (record: LockableRef) => ({ lockableType: lockable(record), lockableParam: record.param });

/** A case is addressed by its slug, every other lockable by its id. */
const slugOf = (record: RecordRef): string => (typeof record.slug === 'string' ? record.slug : record.param);

/** Each lockable type's route in the document: `GET`, `PATCH` and `DELETE` it there. */
type RecordRoute = PathsFor<'get'> & PathsFor<'patch'> & PathsFor<'delete'>;
const RECORD_ROUTES = {
  Case: '/cases/{slug}',
  Page: '/pages/{id}',
  Card: '/cards/{id}',
  Edgenote: '/edgenotes/{id}',
} satisfies { [T in LockableType]: RecordRoute };

/** The REST path of a lockable record: `/cards/12`, `/cases/<slug>`. Throws InvalidError for a type baton does not lock. */
export function recordPath(record: Pick<RecordKey, 'type' | 'param'> & { table?: string; slug?: unknown }): string {
  const type = lockable(record);
  return fillPath(RECORD_ROUTES[type], type === 'Case' ? { slug: slugOf(record) } : { id: record.param });
}

/** The name requests nest a record's attributes under: `Card` → `card`. */
export function paramKey(type: string): string {
  return type.charAt(0).toLowerCase() + type.slice(1);
}

/** A record's own route answers with that record, the way it is now. */
const sameRecord = <T extends Identity>(reply: Reply<Identity>): Reply<T> =>
  // sound for T inferred from the record passed in: the route of a Card answers that Card
  reply as Reply<T>;

/** baton's REST routes, typed from its OpenAPI document. */
export class Api {
  constructor(readonly transport: Transport) {}

  /**
   * Any route of the document, typed from it: `call('get', '/cases/{slug}',
   * {path: {slug}})` resolves to `{status, data: CaseDetail, version}`.
   * Sends `Authorization`, `X-Session-ID`, and `If-Match`/`Lock-Token` when
   * given; an error answer rejects with a typed BatonError.
   */
  call<M extends Method, P extends PathsFor<M>>(
    method: M,
    path: P,
    ...[init]: RouteArgs<Operation<P, M>>
  ): Promise<Reply<RouteData<Operation<P, M>>>> {
    const options: AnyRouteInit = init ?? {};
    return this.transport.request(method.toUpperCase(), fillPath(path, options.path), options);
  }

  private async data<M extends Method, P extends PathsFor<M>>(
    method: M,
    path: P,
    ...args: RouteArgs<Operation<P, M>>
  ): Promise<RouteData<Operation<P, M>>> {
    return (await this.call(method, path, ...args)).data;
  }

  login(email: string, password: string): Promise<Login> {
    return this.data('post', '/auth/login', { body: { email, password } });
  }
  logout(): Promise<null> {
    return this.data('post', '/auth/logout');
  }
  me(): Promise<User> {
    return this.data('get', '/me');
  }
  createUser(user: NewUserFields): Promise<User> {
    return this.data('post', '/users', { body: { user } });
  }
  /** The demo people of a server started with `--demo`; NotFoundError otherwise. */
  demoPeople(): Promise<DemoPeople> {
    return this.data('get', '/auth/demo');
  }

  cases(): Promise<Case[]> {
    return this.data('get', '/cases');
  }
  case(slug: string): Promise<CaseDetail> {
    return this.data('get', '/cases/{slug}', { path: { slug } });
  }
  createCase(attrs: NewCaseFields): Promise<Case> {
    return this.data('post', '/cases', { body: { case: attrs } });
  }
  memberships(slug: string): Promise<Membership[]> {
    return this.data('get', '/cases/{slug}/memberships', { path: { slug } });
  }
  addMember(slug: string, email: string, role: Exclude<Role, 'site admin'>): Promise<Membership> {
    return this.data('post', '/cases/{slug}/memberships', { path: { slug }, body: { membership: { email, role } } });
  }
  createPage(slug: string, page: NewPageFields): Promise<Page> {
    return this.data('post', '/cases/{slug}/pages', { path: { slug }, body: { page } });
  }
  createCard(pageId: number | string, card: NewCardFields): Promise<Card> {
    return this.data('post', '/pages/{id}/cards', { path: { id: pageId }, body: { card } });
  }
  createEdgenote(slug: string, edgenote: NewEdgenoteFields): Promise<Edgenote> {
    return this.data('post', '/cases/{slug}/edgenotes', { path: { slug }, body: { edgenote } });
  }
  /** A case's audit trail (managers), newest first; `limit` and `before` page back. */
  lockEvents(slug: string, query?: { limit?: number; before?: number }): Promise<LockEvent[]> {
    return this.data('get', '/cases/{slug}/lock_events', { path: { slug }, query });
  }

  /** Every open tab on every instance, with its locks (site admins). */
  sessions(): Promise<Session[]> {
    return this.data('get', '/admin/sessions');
  }
  /** Closes a tab (site admins): its locks end with reason `kicked`, and it is told. */
  kick(sessionId: string): Promise<null> {
    return this.data('delete', '/admin/sessions/{sessionId}', { path: { sessionId } });
  }

  /** GET a lockable; `version` is its ETag. */
  async read<T extends Identity>(record: RecordRef): Promise<Reply<T>> {
    const type = lockable(record);
    if (type === 'Case') return sameRecord(await this.call('get', RECORD_ROUTES.Case, { path: { slug: slugOf(record) } }));
    return sameRecord(await this.call('get', RECORD_ROUTES[type], { path: { id: record.param } }));
  }
  /** PATCH a lockable, guarded by `If-Match` and `Lock-Token`. */
  async update<T extends Identity>(record: RecordRef, attrs: UpdateFields, opts: SaveOptions = {}): Promise<Reply<T>> {
    const guards = { ifMatch: opts.ifMatch, lockToken: opts.lockToken };
    const id = { id: record.param };
    switch (lockable(record)) {
      case 'Case':
        return sameRecord(await this.call('patch', RECORD_ROUTES.Case, { path: { slug: slugOf(record) }, body: { case: attrs }, ...guards }));
      case 'Page':
        return sameRecord(await this.call('patch', RECORD_ROUTES.Page, { path: id, body: { page: attrs }, ...guards }));
      case 'Card':
        return sameRecord(await this.call('patch', RECORD_ROUTES.Card, { path: id, body: { card: attrs }, ...guards }));
      case 'Edgenote':
        return sameRecord(await this.call('patch', RECORD_ROUTES.Edgenote, { path: id, body: { edgenote: attrs }, ...guards }));
    }
  }
  /** DELETE a lockable, guarded like an update. */
  async remove(record: RecordRef, opts: SaveOptions = {}): Promise<Reply<null>> {
    const guards = { ifMatch: opts.ifMatch, lockToken: opts.lockToken };
    const type = lockable(record);
    if (type === 'Case') return this.call('delete', RECORD_ROUTES.Case, { path: { slug: slugOf(record) }, ...guards });
    return this.call('delete', RECORD_ROUTES[type], { path: { id: record.param }, ...guards });
  }

  /** POST /locks: 201 new, 200 already this tab's; `takeover` is "Edit anyway", `depth: 'infinity'` a deep lock. */
  async acquireLock(record: LockableRef, options: LockOptions | boolean = {}): Promise<Reply<Lock>> {
    const { takeover, depth } = typeof options === 'boolean' ? { takeover: options, depth: undefined } : options;
    const lock = {
      ...lockRef(record),
      ...(takeover ? { takeover } : {}),
      ...(depth && depth !== '0' ? { depth } : {}),
    };
    const reply = await this.call('post', '/locks', { body: { lock } });
    // only a request with `wait` is answered with a waiter
    const { data } = reply;
    if (data.type !== 'Lock') throw new InvalidError('invalid', reply.status, `baton answered a lock request with a ${data.type}`);
    return { ...reply, data };
  }
  /** POST /locks/batch: every record's lock or none (201, in the order asked); LockHeldError names every lock in the way. */
  lockMany(records: LockableRef[]): Promise<Reply<{ locks: Lock[] }>> {
    return this.call('post', '/locks/batch', { body: { locks: records.map(lockRef) } });
  }
  /** POST /locks/claim: a lock on the first candidate nobody else holds (201), or the one this tab holds (200); NoneFreeError when all are held. */
  claim(candidates: LockableRef[]): Promise<Reply<Lock>> {
    return this.call('post', '/locks/claim', { body: { claim: { candidates: candidates.map(lockRef) } } });
  }
  /** POST /locks with `wait: true`: a Lock (201 free, 200 already this tab's) or this tab's Waiter (202 joined, 200 already waiting). */
  waitForLock(record: LockableRef): Promise<Reply<Lock | Waiter>> {
    const lock = { ...lockRef(record), wait: true };
    return this.call('post', '/locks', { body: { lock } });
  }
  /** DELETE /waiters/:id: leaves the line. */
  leaveLine(id: number | string): Promise<Reply<null>> {
    return this.call('delete', '/waiters/{id}', { path: { id } });
  }
  /** POST /waiters/:id/refresh: renews a waiter of this tab (its channel's pongs do it while it is open). */
  refreshWaiter(id: number | string): Promise<Waiter> {
    return this.data('post', '/waiters/{id}/refresh', { path: { id } });
  }
  releaseLock(token: string): Promise<Reply<null>> {
    return this.call('delete', '/locks/{id}', { path: { id: token } });
  }
  refreshLock(token: string): Promise<Lock> {
    return this.data('post', '/locks/{id}/refresh', { path: { id: token } });
  }
  lock(token: string): Promise<Lock> {
    return this.data('get', '/locks/{id}', { path: { id: token } });
  }
  locks(slug: string): Promise<Lock[]> {
    return this.data('get', '/locks', { query: { case: slug } });
  }
  async lockStatus(record: LockableRef): Promise<LockStatus> {
    return this.data('get', '/locks/status', {
      query: { lockableType: lockable(record), lockableParam: record.param },
    });
  }
  /** Releases every lock of this tab and leaves its lines; `keepalive` lets it outlive the page. */
  releaseSessionLocks(keepalive = false): Promise<Reply<null>> {
    return this.call('delete', '/locks', { query: { session: 'mine' }, keepalive });
  }
}
