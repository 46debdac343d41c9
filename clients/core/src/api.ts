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
import type { components } from './generated/openapi.js';
import { Schema } from './schema.js';
import type {
  AnyRecord,
  Case,
  CaseDetail,
  DemoPeople,
  Fields,
  Identity,
  Lock,
  LockDepth,
  LockEvent,
  LockStatus,
  Login,
  Waiter,
  Membership,
  NewCaseFields,
  NewUserFields,
  RecordKey,
  Role,
  SchemaDocument,
  Session,
  TargetRef,
  User,
} from './types.js';

export interface LockOptions {
  /** "Edit anyway": take the lock over from its holder. */
  takeover?: boolean;
  /** `infinity`: lock a record with everything under it, or a case with everything in it (default `0`). */
  depth?: LockDepth;
}

export interface SaveOptions {
  /** The version this tab last saw: sent as `If-Match`. */
  ifMatch?: number | null;
  /** The tab's lock on the record: sent as `Lock-Token`. */
  lockToken?: string | null;
}

type RecordRef = Pick<RecordKey, 'type' | 'param'> & { slug?: unknown };

/** A lock's target as lock requests name it on the wire: `{lockableType, lockableParam}`. */
const onWire = (record: TargetRef) => ({
  // sound: the served document lists the schema's names; the committed one (these types) the default schema's
  lockableType: record.type as components['schemas']['LockableType'],
  lockableParam: record.param,
});

/** A case is addressed by its slug, every other lockable by its id. */
const slugOf = (record: RecordRef): string => (typeof record.slug === 'string' ? record.slug : record.param);

/** Where a record is created: under a case (its slug) or under a record of the parent type. */
export type ParentRef = Pick<RecordKey, 'type' | 'param'> & { table?: string; slug?: unknown };

/** The REST path of a lockable record: `/tickets/12` (its `table` is its plural), `/cases/<slug>`. */
export function recordPath(record: Pick<RecordKey, 'type' | 'param'> & { table?: string; slug?: unknown }): string {
  if (record.type === 'Case') return fillPath('/cases/{slug}', { slug: slugOf(record) });
  if (!record.table) throw new InvalidError('invalid', 0, `baton: the path of ${record.type}/${record.param} needs its table`);
  return `/${encodeURIComponent(record.table)}/${encodeURIComponent(record.param)}`;
}

/** baton's REST routes, typed from its OpenAPI document. */
export class Api {
  /**
   * `caseOf` names the case (its slug) of a record of an external type: lock
   * requests on such records carry it as `case`.
   */
  constructor(
    readonly transport: Transport,
    private readonly caseOf: (record: TargetRef) => string | undefined = () => undefined,
  ) {}

  /** A lock's target as lock requests name it; a record that lives in the host's database (`store: "external"`) with its case. */
  private async ref(record: TargetRef) {
    const external = record.type !== 'Case' && (await this.schema()).type(record.type)?.store === 'external';
    return { ...onWire(record), ...(external ? { case: this.caseOf(record) } : {}) };
  }

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

  /** `GET /schema`: the record types in force (asked once; asked again after a failure). */
  schema(): Promise<Schema> {
    this.schemaAsked ??= this.data('get', '/schema').then(
      // sound: `fields` holds JSON Schemas, which the document leaves untyped
      (doc) => new Schema(doc as unknown as SchemaDocument),
      (error: unknown) => {
        this.schemaAsked = null;
        throw error;
      },
    );
    return this.schemaAsked;
  }
  private schemaAsked: Promise<Schema> | null = null;

  /** The path of a record, its plural looked up in the schema when the reference has no `table`. */
  private async pathOf(record: RecordRef & { table?: string }): Promise<string> {
    if (record.type === 'Case' || record.table) return recordPath(record);
    const type = (await this.schema()).type(record.type);
    if (!type) throw new InvalidError('invalid', 0, `baton: ${record.type} is not a declared type`);
    return recordPath({ ...record, table: type.plural });
  }

  /** GET a lockable; `version` is its ETag. */
  async read<T extends Identity>(record: RecordRef & { table?: string }): Promise<Reply<T>> {
    return this.transport.request<T>('GET', await this.pathOf(record));
  }
  /** The key a body nests a record of `type` under, from `GET /schema` (`Case` → `case`). */
  private async bodyKeyOf(type: string): Promise<string> {
    if (type === 'Case') return 'case';
    const key = (await this.schema()).bodyKey(type);
    if (!key) throw new InvalidError('invalid', 0, `baton: ${type} is not a declared type`);
    return key;
  }

  /** PATCH a lockable, guarded by `If-Match` and Lock-Token`; the body nests `attrs` under the type's body key (`ticket`, from `GET /schema`). */
  async update<T extends Identity>(record: RecordRef & { table?: string }, attrs: Fields, opts: SaveOptions = {}): Promise<Reply<T>> {
    const body = { [await this.bodyKeyOf(record.type)]: attrs };
    return this.transport.request<T>('PATCH', await this.pathOf(record), { body, ifMatch: opts.ifMatch, lockToken: opts.lockToken });
  }
  /** DELETE a lockable, guarded like an update. */
  async remove(record: RecordRef & { table?: string }, opts: SaveOptions = {}): Promise<Reply<null>> {
    return this.transport.request<null>('DELETE', await this.pathOf(record), opts);
  }
  /**
   * Creates a record of a declared type under its parent: `POST
   * /cases/<slug>/<plural>` for a type under the case, else `POST
   * /<parent table>/<id>/<plural>`.
   */
  async create<T extends AnyRecord = AnyRecord>(type: string, parent: ParentRef, fields: Fields): Promise<T> {
    const schema = await this.schema();
    const declared = schema.type(type);
    if (!declared) throw new InvalidError('invalid', 0, `baton: ${type} is not a declared type`);
    const under = parent.type === 'Case' ? recordPath(parent) : await this.pathOf(parent);
    const reply = await this.transport.request<T>('POST', `${under}/${encodeURIComponent(declared.plural)}`, {
      body: { [declared.bodyKey]: fields },
    });
    return reply.data;
  }

  /** POST /locks: 201 new, 200 already this tab's; `takeover` is "Edit anyway", `depth: 'infinity'` a deep lock. */
  async acquireLock(record: TargetRef, options: LockOptions | boolean = {}): Promise<Reply<Lock>> {
    const { takeover, depth } = typeof options === 'boolean' ? { takeover: options, depth: undefined } : options;
    const lock = {
      ...(await this.ref(record)),
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
  async lockMany(records: TargetRef[]): Promise<Reply<{ locks: Lock[] }>> {
    const locks = await Promise.all(records.map((r) => this.ref(r)));
    return this.call('post', '/locks/batch', { body: { locks } });
  }
  /** POST /locks/claim: a lock on the first candidate nobody else holds (201), or the one this tab holds (200); NoneFreeError when all are held. */
  async claim(candidates: TargetRef[]): Promise<Reply<Lock>> {
    const refs = await Promise.all(candidates.map((r) => this.ref(r)));
    return this.call('post', '/locks/claim', { body: { claim: { candidates: refs } } });
  }
  /** POST /locks with `wait: true`: a Lock (201 free, 200 already this tab's) or this tab's Waiter (202 joined, 200 already waiting). */
  async waitForLock(record: TargetRef): Promise<Reply<Lock | Waiter>> {
    const lock = { ...(await this.ref(record)), wait: true };
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
  async lockStatus(record: TargetRef): Promise<LockStatus> {
    return this.data('get', '/locks/status', { query: await this.ref(record) });
  }
  /** Releases every lock of this tab and leaves its lines; `keepalive` lets it outlive the page. */
  releaseSessionLocks(keepalive = false): Promise<Reply<null>> {
    return this.call('delete', '/locks', { query: { session: 'mine' }, keepalive });
  }
}
