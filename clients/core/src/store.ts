import type {
  AnyRecord,
  Case,
  CaseDetail,
  ChangeFrame,
  EndedLock,
  Lock,
  OnlineUser,
  RecordKey,
  RecordMap,
  Role,
  Waiter,
  Watchable,
} from './types.js';
import { inLine, waiterIn } from './line.js';
import type { Schema } from './schema.js';

/** `${type}/${param}`: how every record is keyed. */
export const keyOf = (record: Pick<RecordKey, 'type' | 'param'>): string => `${record.type}/${record.param}`;

export type Listener = () => void;

/** What an app renders: a consistent, immutable view of one case. */
export interface CaseView<R extends RecordMap = RecordMap> {
  case: Case | null;
  role: Role | null;
  /** The record types in force (`GET /schema`); null until loaded. */
  schema: Schema | null;
  /** Every record of each declared type, by type name: ordered types by `position`, others by id. */
  records: { [T in keyof R]?: R[T][] };
  /**
   * Each record's children by the parent's key and the child type, in the
   * same order: `children['Column/3'].Card`, and the case's own under
   * `Case/<id>`.
   */
  children: Record<string, { [T in keyof R]?: R[T][] }>;
  locks: Lock[];
  /** The lock on each locked record, by the record's key. */
  lockOn: Record<string, Lock>;
  /**
   * The deep lock (`depth: infinity`) on a record that encloses another (its
   * parent, its parent's parent, …, its case), by the enclosed record's key.
   * Whoever holds it holds the record too (see `Schema.enclosingKeys`).
   */
  coverOn: Record<string, Lock>;
  /** Every tab waiting for a record of the case, in line order. */
  waiters: Waiter[];
  /** Each record's waiting line, in line order, by the record's key. */
  lineOn: Record<string, Waiter[]>;
  onlineUsers: OnlineUser[];
}

/** What the store keeps: the document's watchables (records, locks and waiters). */
type Stored = Watchable;

/** The watchable as a lock (a held one, or an ended one from a `destroy` frame), or null. */
export function lockIn(record: Stored): Lock | EndedLock | null {
  // sound: only locks are tagged `Lock`
  return record.type === 'Lock' && 'token' in record && 'lockable' in record && record.lockable ? (record as Lock | EndedLock) : null;
}

/** The record a lock or a waiter is about, by its key; null for anything else. */
const holdsOn = (record: Stored): string | null => {
  const on = lockIn(record) ?? waiterIn(record);
  return on ? keyOf(on.lockable) : null;
};

/** A record of a declared type (not a case, a lock, a waiter, or a destroyed record's bare identity). */
export function recordIn(record: Stored): AnyRecord | null {
  if (record.type === 'Case' || record.type === 'Lock' || record.type === 'Waiter') return null;
  return 'caseId' in record && typeof record.caseId === 'number' && 'version' in record ? record : null;
}

const caseIn = (r: Stored): Case | null => (r.type === 'Case' && 'slug' in r && 'title' in r ? (r as Case) : null);

/**
 * A node of `GET /cases/:slug` (the case or a record of it) split into its
 * own attributes and its children's lists: the keys `GET /schema` says its
 * child types nest under (`nestKey`). Without a schema, an array of records
 * is taken as a list of children.
 */
function recordLists(node: { [key: string]: unknown }, schema: Schema | null): [Stored & { [key: string]: unknown }, Stored[][]] {
  const own: { [key: string]: unknown } = {};
  const lists: Stored[][] = [];
  const type = typeof node.type === 'string' ? node.type : '';
  const nested = schema ? new Set(schema.childrenOf(type).map((t) => t.nestKey)) : null;
  const isList = (key: string, value: unknown[]) =>
    nested ? nested.has(key) : value.every((v) => v && typeof v === 'object' && 'type' in v && 'param' in v);
  for (const [key, value] of Object.entries(node)) {
    if (!Array.isArray(value)) own[key] = value;
    // sound: the server nests records of the child type under its nest key
    else if (isList(key, value)) lists.push(value as Stored[]);
  }
  // sound: a node of the case's tree is a record: `type`, `param` and its fields
  return [own as Stored & { [key: string]: unknown }, lists];
}

const isDeep = (lock: Lock | undefined): lock is Lock => lock?.depth === 'infinity';

const ROLES: { readonly [R in Role]: R } = {
  reader: 'reader',
  editor: 'editor',
  manager: 'manager',
  'site admin': 'site admin',
};
/** A role named by `GET /cases/:slug`; null for one this client does not know. */
const roleOf = (role: string): Role | null => Object.values(ROLES).find((known) => known === role) ?? null;

const versionOf = (record: Stored | undefined): number | undefined =>
  record && 'version' in record && typeof record.version === 'number' ? record.version : undefined;

// records of external types have no numeric id: by param
const byId = (a: AnyRecord, b: AnyRecord) => a.id - b.id || (a.param < b.param ? -1 : a.param > b.param ? 1 : 0);
const byPosition = (a: AnyRecord, b: AnyRecord) => (a.position ?? 0) - (b.position ?? 0) || a.id - b.id;

/**
 * A normalized cache of one case, keyed by `${type}/${param}`. It applies
 * snapshots and create/update/destroy frames and tells subscribers.
 */
/** The same array when it holds the same items in the same order: unchanged lists keep their identity. */
function share<T>(previous: T[] | undefined, next: T[]): T[] {
  return previous && previous.length === next.length && previous.every((x, i) => x === next[i]) ? previous : next;
}

/** The same object when every value is the same: unchanged maps keep their identity. */
function shareMap<T>(previous: Record<string, T> | undefined, next: Record<string, T>): Record<string, T> {
  if (!previous) return next;
  const keys = Object.keys(next);
  return keys.length === Object.keys(previous).length && keys.every((k) => previous[k] === next[k]) ? previous : next;
}

/** How many deletions the store remembers (so a late reply cannot bring a record back). */
const TOMBSTONES = 10_000;

export class CaseStore<R extends RecordMap = RecordMap> {
  private records = new Map<string, Stored>();
  /**
   * Keys of what was deleted, so that a late reply or frame about it (a
   * save's answer, an acquire's lock) cannot bring it back. A `create`
   * frame or a fresh snapshot is the only way back in.
   */
  private tombstones = new Set<string>();
  private onlineUsers: OnlineUser[] = [];
  private role: Role | null = null;
  private schema: Schema | null = null;
  private listeners = new Set<Listener>();
  private view: CaseView<R> | null = null;

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /**
   * Whether a record of the tree (the case, a record of a declared type)
   * changed since the last view. When only locks, lines or presence did,
   * the next view keeps the last one's records and children as they are: in
   * a case of thousands of records, taking a lock re-sorts nothing.
   */
  private treeChanged = true;

  private changed(): void {
    this.view = null;
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * A record of an external type (`store: "external"`): it lives in a host's
   * database, comes only from frames the host relays (and `upsert`), and is
   * whatever the host sent, keyed `${type}/${param}`.
   */
  private outside(record: Stored): AnyRecord | null {
    // sound: the host relays its records with their type and param, as the schema declares the type
    return this.schema?.type(record.type)?.store === 'external' ? (record as AnyRecord) : null;
  }

  /** The record types in force: they say which record is whose child. */
  setSchema(schema: Schema): void {
    if (this.schema === schema) return;
    this.schema = schema;
    this.treeChanged = true;
    this.changed();
  }

  /**
   * The record under a key, e.g. `get('Card/12')`. The type argument is the
   * caller's word for what its key holds (`get<Card>('Card/12')`); without
   * one, the result is the checked union.
   */
  get<T extends Stored = Stored>(key: string): T | undefined {
    // unchecked by design: the caller names the kind its `${type}/` key prefix stands for
    return this.records.get(key) as T | undefined;
  }

  /** Every record of a declared type, e.g. `all('Card')`, in no particular order. */
  all<K extends keyof R & string>(type: K): R[K][] {
    const found: R[K][] = [];
    for (const record of this.records.values()) {
      // sound: records are stored as the server sent them, and its records of `type` are R[type]
      if (record.type === type && (recordIn(record) ?? this.outside(record))) found.push(record as R[K]);
    }
    return found;
  }

  /** Every lock of the case. */
  locks(): Lock[] {
    const found: Lock[] = [];
    for (const record of this.records.values()) {
      const lock = lockIn(record);
      if (lock) found.push(lock);
    }
    return found;
  }

  private waiterList(): Waiter[] {
    const found: Waiter[] = [];
    for (const record of this.records.values()) {
      const waiter = waiterIn(record);
      if (waiter) found.push(waiter);
    }
    return found;
  }

  /** The lock on a record, if any. */
  lockOn(record: Pick<RecordKey, 'type' | 'param'>): Lock | undefined {
    const key = keyOf(record);
    return this.locks().find((lock) => keyOf(lock.lockable) === key);
  }

  /** Replaces everything with a fresh `GET /cases/:slug` (it has no records of external types: those stay). */
  reset(detail: CaseDetail): void {
    for (const [key, r] of this.records) if (!this.outside(r)) this.records.delete(key);
    // the snapshot is the truth; frames that came meanwhile are applied after it, deletions included
    this.tombstones.clear();
    this.treeChanged = true;
    const { activeLocks, waiters, onlineUsers, role, ...kase } = detail;
    const walk = (node: { [key: string]: unknown }) => {
      const [own, lists] = recordLists(node, this.schema);
      this.put(own);
      for (const list of lists) for (const child of list) walk(child);
    };
    walk(kase);
    for (const lock of activeLocks) this.put(lock);
    for (const waiter of waiters) this.put(waiter);
    this.onlineUsers = onlineUsers;
    this.role = roleOf(role);
    this.changed();
  }

  /** Replaces the case's locks and waiters (the welcome frame carries them). */
  setLocks(locks: Lock[], waiters: Waiter[] = []): void {
    for (const [key, r] of this.records) if (holdsOn(r) !== null) this.records.delete(key);
    for (const lock of locks) this.put(lock);
    for (const waiter of waiters) this.put(waiter);
    this.changed();
  }

  setOnlineUsers(onlineUsers: OnlineUser[]): void {
    this.onlineUsers = onlineUsers;
    this.changed();
  }

  /** Whether the record (or lock, or waiter) was deleted and must not come back from a late reply. */
  isDeleted(record: Pick<RecordKey, 'type' | 'param'>): boolean {
    return this.tombstones.has(keyOf(record));
  }

  /** Inserts or replaces a record, unless the cache already has a newer version or it was deleted. */
  upsert(record: Stored): void {
    if (this.put(record)) this.changed();
  }

  /**
   * Takes a record out (the tab deleted it: a late reply about it cannot
   * bring it back), or a lock or waiter the tab itself ended.
   */
  remove(record: Pick<RecordKey, 'type' | 'param'>): void {
    const own = record.type === 'Lock' || record.type === 'Waiter';
    if (this.drop(keyOf(record), !own)) this.changed();
  }

  /** Applies a create/update/destroy frame. */
  apply(frame: ChangeFrame): void {
    const record: Stored | undefined = frame.watchable;
    // a frame without an identity is dropped
    if (!record || typeof record.type !== 'string' || record.param == null) return;
    const key = keyOf(record);
    // a create is news of a new record (an id can be used again on some databases)
    if (frame.type === 'create') this.tombstones.delete(key);
    const changed = frame.type === 'destroy' ? this.drop(key) : this.put(record);
    if (changed) this.changed();
  }

  private bury(key: string): void {
    if (this.tombstones.size >= TOMBSTONES) {
      const oldest = this.tombstones.values().next();
      if (!oldest.done) this.tombstones.delete(oldest.value);
    }
    this.tombstones.add(key);
  }

  private put(record: Stored): boolean {
    const key = keyOf(record);
    if (this.tombstones.has(key)) return false;
    // a lock or waiter on a deleted record is gone with it
    const on = holdsOn(record);
    if (on !== null && this.tombstones.has(on)) return false;
    const incoming = versionOf(record);
    const current = versionOf(this.records.get(key));
    if (incoming !== undefined && current !== undefined && incoming < current) return false;
    if (record.type === 'Lock') {
      const lock = lockIn(record);
      if (!lock) return false;
      // one lock per record: a new holding replaces the previous one
      const on = keyOf(lock.lockable);
      for (const [k, r] of this.records) {
        const other = lockIn(r);
        if (other && k !== key && keyOf(other.lockable) === on) this.records.delete(k);
      }
    }
    this.records.set(key, record);
    if (holdsOn(record) === null) this.treeChanged = true;
    return true;
  }

  private drop(key: string, bury = true): boolean {
    if (bury) this.bury(key);
    const was = this.records.get(key);
    if (!this.records.delete(key)) return false;
    if (was && holdsOn(was) === null) this.treeChanged = true;
    // what hangs off it goes too: its children (and theirs), its lock and line
    for (const [k, r] of [...this.records]) {
      if (!this.records.has(k)) continue;
      const child = recordIn(r);
      if (holdsOn(r) === key) this.records.delete(k);
      else if (child && this.schema?.parentOf(child) === key) this.drop(k);
    }
    return true;
  }

  /** The current view; the same object until something changes. */
  getView = (): CaseView<R> => {
    if (this.view) return this.view;
    const schema = this.schema;
    const locks = this.locks();
    const lockOn: Record<string, Lock> = {};
    for (const lock of locks) lockOn[keyOf(lock.lockable)] = lock;
    const coverOn: Record<string, Lock> = {};
    const get = (k: string) => this.records.get(k) as AnyRecord | undefined;
    if (schema && locks.some(isDeep)) {
      for (const [key, record] of this.records) {
        const child = recordIn(record);
        const cover = child && schema.enclosingKeys(child, get).map((k) => lockOn[k]).find(isDeep);
        if (cover) coverOn[key] = cover;
      }
    }
    const prev = this.previous;
    const sameTree = !this.treeChanged && prev !== null;
    this.treeChanged = false;
    let kase: Case | null = sameTree ? prev.case : null;
    let records: { [type: string]: AnyRecord[] } = {};
    let children: Record<string, { [type: string]: AnyRecord[] }> = {};
    if (sameTree) {
      // only locks, lines or presence changed: the tree is the last view's
      // sound: the last view's lists, of the same shapes
      records = prev.records as { [type: string]: AnyRecord[] };
      children = prev.children as Record<string, { [type: string]: AnyRecord[] }>;
    } else {
      for (const record of this.records.values()) kase ??= caseIn(record);
      for (const record of this.records.values()) {
        const r = recordIn(record) ?? this.outside(record);
        if (r) (records[r.type] ??= []).push(r);
      }
      for (const [type, list] of Object.entries(records)) {
        list.sort(schema?.type(type)?.ordered ? byPosition : byId);
        for (const r of list) {
          // an external type's parent is the case
          const parent = schema?.parentOf(r) ?? (kase && this.outside(r) ? `Case/${kase.id}` : null);
          if (parent) ((children[parent] ??= {})[type] ??= []).push(r);
        }
      }
    }
    const waiters = inLine(this.waiterList());
    const lineOn: Record<string, Waiter[]> = {};
    for (const waiter of waiters) (lineOn[keyOf(waiter.lockable)] ??= []).push(waiter);
    // sound: each list holds the records the server sent under that type name, R[type] by R's contract
    const next: CaseView<R> = {
      case: kase,
      role: this.role,
      schema,
      records: records as CaseView<R>['records'],
      children: children as CaseView<R>['children'],
      locks,
      lockOn,
      coverOn,
      waiters,
      lineOn,
      onlineUsers: this.onlineUsers,
    };
    this.view = this.shared(next);
    this.previous = this.view;
    return this.view;
  };

  /** The last view handed out: what the next one shares its unchanged parts with. */
  private previous: CaseView<R> | null = null;

  /**
   * Structural sharing with the previous view: every list and map whose
   * contents did not change is the previous one, so a selector over one
   * record's children (or the locks) sees the same value after a frame
   * about something else.
   */
  private shared(next: CaseView<R>): CaseView<R> {
    const prev = this.previous;
    if (!prev) return next;
    const sameTree = next.records === prev.records && next.children === prev.children;
    type Lists = { [type: string]: AnyRecord[] | undefined };
    const lists = (p: Lists | undefined, n: Lists): Lists => {
      const out: Lists = {};
      for (const [type, list] of Object.entries(n)) if (list) out[type] = share(p?.[type], list);
      // sound: the lists are the same records under the same type names
      return shareMap(p as Record<string, AnyRecord[]> | undefined, out as Record<string, AnyRecord[]>);
    };
    const children: Record<string, Lists> = {};
    if (!sameTree) {
      for (const [parent, byType] of Object.entries(next.children as Record<string, Lists>)) {
        children[parent] = lists((prev.children as Record<string, Lists>)[parent], byType);
      }
    }
    const lines: Record<string, Waiter[]> = {};
    for (const [key, line] of Object.entries(next.lineOn)) lines[key] = share(prev.lineOn[key], line);
    // sound: shared parts are the previous view's, of the same shapes
    return {
      ...next,
      records: sameTree ? prev.records : (lists(prev.records, next.records) as CaseView<R>['records']),
      children: sameTree ? prev.children : (shareMap(prev.children as Record<string, Lists>, children) as CaseView<R>['children']),
      locks: share(prev.locks, next.locks),
      lockOn: shareMap(prev.lockOn, next.lockOn),
      coverOn: shareMap(prev.coverOn, next.coverOn),
      waiters: share(prev.waiters, next.waiters),
      lineOn: shareMap(prev.lineOn, lines),
    };
  }
}
