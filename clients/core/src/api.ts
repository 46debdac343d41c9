import type { Reply, RequestOptions, Transport } from './http.js';
import type {
  Card,
  Case,
  CaseDetail,
  Edgenote,
  Identity,
  Lock,
  LockStatus,
  Login,
  Membership,
  NewCardFields,
  NewCaseFields,
  NewEdgenoteFields,
  NewPageFields,
  NewUserFields,
  Page,
  RecordKey,
  Role,
  User,
} from './types.js';

/** Identifies a lockable: a record, or just its `type` and `param`. */
export type LockableRef = Pick<RecordKey, 'type' | 'param'>;

export interface SaveOptions {
  /** The version this tab last saw: sent as `If-Match`. */
  ifMatch?: number | null;
  /** The tab's lock on the record: sent as `Lock-Token`. */
  lockToken?: string | null;
}

/** The REST path of a lockable record: `/cards/12`, `/cases/<slug>`. */
export function recordPath(record: Pick<RecordKey, 'type' | 'table' | 'param'> & { slug?: unknown }): string {
  if (record.type === 'Case' && typeof record.slug === 'string') {
    return `/cases/${encodeURIComponent(record.slug)}`;
  }
  return `/${record.table}/${encodeURIComponent(record.param)}`;
}

/** The name requests nest a record's attributes under: `Card` → `card`. */
export function paramKey(type: string): string {
  return type.charAt(0).toLowerCase() + type.slice(1);
}

const slugPath = (slug: string) => `/cases/${encodeURIComponent(slug)}`;

/** baton's REST routes, one method each. */
export class Api {
  constructor(readonly transport: Transport) {}

  private async data<T>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    return (await this.transport.request<T>(method, path, opts)).data;
  }

  login(email: string, password: string): Promise<Login> {
    return this.data('POST', '/auth/login', { body: { email, password } });
  }
  logout(): Promise<null> {
    return this.data('POST', '/auth/logout');
  }
  me(): Promise<User> {
    return this.data('GET', '/me');
  }
  createUser(user: NewUserFields): Promise<User> {
    return this.data('POST', '/users', { body: { user } });
  }

  cases(): Promise<Case[]> {
    return this.data('GET', '/cases');
  }
  case(slug: string): Promise<CaseDetail> {
    return this.data('GET', slugPath(slug));
  }
  createCase(attrs: NewCaseFields): Promise<Case> {
    return this.data('POST', '/cases', { body: { case: attrs } });
  }
  memberships(slug: string): Promise<Membership[]> {
    return this.data('GET', `${slugPath(slug)}/memberships`);
  }
  addMember(slug: string, email: string, role: Exclude<Role, 'site admin'>): Promise<Membership> {
    return this.data('POST', `${slugPath(slug)}/memberships`, { body: { membership: { email, role } } });
  }
  createPage(slug: string, page: NewPageFields): Promise<Page> {
    return this.data('POST', `${slugPath(slug)}/pages`, { body: { page } });
  }
  createCard(pageId: number | string, card: NewCardFields): Promise<Card> {
    return this.data('POST', `/pages/${pageId}/cards`, { body: { card } });
  }
  createEdgenote(slug: string, edgenote: NewEdgenoteFields): Promise<Edgenote> {
    return this.data('POST', `${slugPath(slug)}/edgenotes`, { body: { edgenote } });
  }

  /** GET a lockable; `version` is its ETag. */
  read<T extends Identity>(record: RecordKey & { slug?: unknown }): Promise<Reply<T>> {
    return this.transport.request<T>('GET', recordPath(record));
  }
  /** PATCH a lockable, guarded by `If-Match` and `Lock-Token`. */
  update<T extends Identity>(
    record: RecordKey & { slug?: unknown },
    attrs: Record<string, unknown>,
    opts: SaveOptions = {},
  ): Promise<Reply<T>> {
    return this.transport.request<T>('PATCH', recordPath(record), {
      body: { [paramKey(record.type)]: attrs },
      ifMatch: opts.ifMatch,
      lockToken: opts.lockToken,
    });
  }
  /** DELETE a lockable, guarded like an update. */
  remove(record: RecordKey & { slug?: unknown }, opts: SaveOptions = {}): Promise<Reply<null>> {
    return this.transport.request<null>('DELETE', recordPath(record), {
      ifMatch: opts.ifMatch,
      lockToken: opts.lockToken,
    });
  }

  /** POST /locks: 201 new, 200 already this tab's; `takeover` is "Edit anyway". */
  acquireLock(record: LockableRef, takeover = false): Promise<Reply<Lock>> {
    const lock: Record<string, unknown> = { lockableType: record.type, lockableParam: record.param };
    if (takeover) lock.takeover = true;
    return this.transport.request<Lock>('POST', '/locks', { body: { lock } });
  }
  releaseLock(token: string): Promise<Reply<null>> {
    return this.transport.request<null>('DELETE', `/locks/${encodeURIComponent(token)}`);
  }
  refreshLock(token: string): Promise<Lock> {
    return this.data('POST', `/locks/${encodeURIComponent(token)}/refresh`);
  }
  lock(token: string): Promise<Lock> {
    return this.data('GET', `/locks/${encodeURIComponent(token)}`);
  }
  locks(slug: string): Promise<Lock[]> {
    return this.data('GET', '/locks', { query: { case: slug } });
  }
  lockStatus(record: LockableRef): Promise<LockStatus> {
    return this.data('GET', '/locks/status', {
      query: { lockableType: record.type, lockableParam: record.param },
    });
  }
  /** Releases every lock of this tab; `keepalive` lets it outlive the page. */
  releaseSessionLocks(keepalive = false): Promise<Reply<null>> {
    return this.transport.request<null>('DELETE', '/locks', { query: { session: 'mine' }, keepalive });
  }
}
