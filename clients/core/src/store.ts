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
   * same order: `children['Project/3'].Ticket`, and the case's own under
   * `Case/<id>`.
   */
  children: Record<string, { [T in keyof R]?: R[T][] }>;
  locks: Lock[];
  /** The lock on each locked record, by the record's key. */
  lockOn: Record<string, Lock>;
  /**
   * The deep lock (`depth: infinity`) on one of a record's containers (its
   * parent, its parent's parent, …, its case), by the contained record's
   * key. Whoever holds it holds the record too (see `Schema.containerKeys`).
   */
  containerLockOn: Record<string, Lock>;
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

type Order = (a: AnyRecord, b: AnyRecord) => number;
const byParam = (a: AnyRecord, b: AnyRecord) => (a.param < b.param ? -1 : a.param > b.param ? 1 : 0);
// records of external types have no numeric id: by param
const byId: Order = (a, b) => a.id - b.id || byParam(a, b);
const byPosition: Order = (a, b) => (a.position ?? 0) - (b.position ?? 0) || a.id - b.id || byParam(a, b);

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

/** Where `record` is (or would go) in a list sorted by `order`: its index when found, else `-(insertion point) - 1`. */
function search(list: readonly AnyRecord[], record: AnyRecord, order: Order): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = order(list[mid]!, record);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

/** How many deletions the store remembers (so a late reply cannot bring a record back). */
const TOMBSTONES = 10_000;
/** A frame that changes more records than this share of the case rebuilds the lists instead of patching them. */
const REBUILD_SHARE = 8;

type Lists = { [type: string]: AnyRecord[] | undefined };
/** Where a record of the tree is listed: its type's list, and its parent's list of that type. */
interface Place {
  type: string;
  parent: string | null;
}
const SEP = '\u0000';

/**
 * A normalized cache of one case, keyed by `${type}/${param}`. It applies
 * snapshots and create/update/destroy frames and tells subscribers.
 *
 * A frame costs what it changed: records, locks and waiters are indexed as
 * they come, and the next view patches the sorted lists of the records that
 * changed (a binary search and one splice each) and shares everything else
 * with the previous view. A snapshot keeps every record whose version did
 * not change (the same object), so a reconnect re-renders only what is new.
 */
export class CaseStore<R extends RecordMap = RecordMap> {
  private records = new Map<string, Stored>();
  /** The case's locks by their own key, and which lock is on each record. */
  private lockMap = new Map<string, Lock>();
  private lockFor = new Map<string, string>();
  private waiterMap = new Map<string, Waiter>();
  /** Each record's children's keys, by the parent's key (the case's own under `Case/<id>`). */
  private kids = new Map<string, Set<string>>();
  /** Where each record of the tree is listed now (as of its last put). */
  private placeOf = new Map<string, Place>();
  /**
   * Keys of what was deleted, with when (on `clock`), so that a late reply
   * or frame about it (a save's answer, an acquire's lock) cannot bring it
   * back. A `create` frame, or a snapshot asked for after the deletion that
   * has the record again, are the only ways back in.
   */
  private tombstones = new Map<string, number>();
  private clock = 0;
  private caseKey: string | null = null;
  private onlineUsers: OnlineUser[] = [];
  private role: Role | null = null;
  private schema: Schema | null = null;
  private listeners = new Set<Listener>();
  private view: CaseView<R> | null = null;
  /** The last view handed out: what the next one shares its unchanged parts with. */
  private previous: CaseView<R> | null = null;
  /** Records of the tree changed since the last view: each with the object the last view listed (undefined: none). */
  private pending = new Map<string, AnyRecord | undefined>();
  /** The lists need building from scratch (first view, a new schema, a new case, a large snapshot). */
  private rebuild = true;
  private caseChanged = true;
  private locksChanged = true;
  private waitersChanged = true;
  /** The sorted lists of the last view, by `type` and by `parent\0type`. */
  private lists = new Map<string, AnyRecord[]>();
  /** Lists copied since the last view (they may be changed in place until the next). */
  private owned = new WeakSet<AnyRecord[]>();
  /** A record of the tree came, went or changed its place since the last view (deep locks cover anew). */
  private moved = true;

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

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

  /** A record of the tree: a record of a declared type (baton's or a host's). */
  private treeRecord(record: Stored | undefined): AnyRecord | null {
    return record ? (recordIn(record) ?? this.outside(record)) : null;
  }

  /** Where a record of the tree is listed: its type, and its parent's key (an external type's parent is the case). */
  private placeFor(record: AnyRecord): Place {
    const kase = this.caseKey ? this.records.get(this.caseKey) : undefined;
    const parent = this.schema?.parentOf(record) ?? (kase && this.outside(record) ? `Case/${kase.param}` : null);
    return { type: record.type, parent };
  }

  private order(type: string): Order {
    return this.schema?.type(type)?.ordered ? byPosition : byId;
  }

  /** The record types in force: they say which record is whose child. */
  setSchema(schema: Schema): void {
    if (this.schema === schema) return;
    this.schema = schema;
    this.reindex();
    this.changed();
  }

  /** Places every record of the tree again (a new schema or case changes parents and orders). */
  private reindex(): void {
    this.kids.clear();
    this.placeOf.clear();
    for (const [key, record] of this.records) {
      const r = this.treeRecord(record);
      if (r) this.index(key, r);
    }
    this.rebuild = true;
  }

  private index(key: string, record: AnyRecord): void {
    const place = this.placeFor(record);
    const was = this.placeOf.get(key);
    if (was?.parent !== place.parent) {
      if (was?.parent) this.kids.get(was.parent)?.delete(key);
      if (place.parent) {
        let set = this.kids.get(place.parent);
        if (!set) this.kids.set(place.parent, (set = new Set()));
        set.add(key);
      }
    }
    this.placeOf.set(key, place);
  }

  private unindex(key: string): void {
    const was = this.placeOf.get(key);
    if (was?.parent) this.kids.get(was.parent)?.delete(key);
    this.placeOf.delete(key);
  }

  /**
   * The record under a key, e.g. `get('Ticket/12')`. The type argument is
   * the caller's word for what its key holds (`get<Ticket>('Ticket/12')`);
   * without one, the result is the checked union.
   */
  get<T extends Stored = Stored>(key: string): T | undefined {
    // unchecked by design: the caller names the kind its `${type}/` key prefix stands for
    return this.records.get(key) as T | undefined;
  }

  /** Every record of a declared type, e.g. `all('Ticket')`, in no particular order. */
  all<K extends keyof R & string>(type: K): R[K][] {
    const found: R[K][] = [];
    for (const record of this.records.values()) {
      // sound: records are stored as the server sent them, and its records of `type` are R[type]
      if (record.type === type && this.treeRecord(record)) found.push(record as R[K]);
    }
    return found;
  }

  /** Every lock of the case. */
  locks(): Lock[] {
    return [...this.lockMap.values()];
  }

  /** The lock on a record, if any. */
  lockOn(record: Pick<RecordKey, 'type' | 'param'>): Lock | undefined {
    const key = this.lockFor.get(keyOf(record));
    return key ? this.lockMap.get(key) : undefined;
  }

  /** A point in time for `reset`: taken before a snapshot is asked for. */
  mark(): number {
    return this.clock;
  }

  /**
   * Makes a fresh `GET /cases/:slug` the truth (it has no records of
   * external types: those stay). `asked` is `mark()` from before the
   * snapshot was asked for: what was deleted since stays deleted even if
   * the snapshot still has it, and what was deleted before comes back only
   * if the snapshot has it again. Records whose version did not change stay
   * the same objects.
   */
  reset(detail: CaseDetail, asked = this.clock): void {
    const { activeLocks, waiters, onlineUsers, role, ...kase } = detail;
    const seen = new Set<string>();
    const incoming: Stored[] = [];
    const walk = (node: { [key: string]: unknown }) => {
      const [own, lists] = recordLists(node, this.schema);
      incoming.push(own);
      for (const list of lists) for (const child of list) walk(child);
    };
    walk(kase);
    const before = this.pending.size;
    for (const record of incoming) {
      const key = keyOf(record);
      const buried = this.tombstones.get(key);
      if (buried !== undefined) {
        // deleted while the snapshot was on its way: it stays deleted
        if (buried > asked) continue;
        // the snapshot is newer than the deletion and has it: it is back
        this.tombstones.delete(key);
      }
      seen.add(key);
      this.put(record, true);
    }
    // what the snapshot no longer has was deleted before it was taken
    for (const [key, record] of [...this.records]) {
      if (seen.has(key) || holdsOn(record) !== null || this.outside(record) || !this.records.has(key)) continue;
      this.drop(key, asked);
    }
    this.replaceHolds(activeLocks, waiters, asked);
    this.onlineUsers = onlineUsers;
    this.role = roleOf(role);
    // most of the case is new (the first load): the lists are built once rather than patched record by record
    if (this.pending.size - before > this.placeOf.size / REBUILD_SHARE) this.rebuild = true;
    this.changed();
  }

  /** Replaces the case's locks and waiters (the welcome frame carries them). */
  setLocks(locks: Lock[], waiters: Waiter[] = []): void {
    this.replaceHolds(locks, waiters, this.clock);
    this.changed();
  }

  /**
   * The case's locks and waiters become these (of a snapshot asked for at
   * `asked`: one that ended since stays ended); unchanged ones stay the
   * same objects.
   */
  private replaceHolds(locks: Lock[], waiters: Waiter[], asked: number): void {
    const keep = new Set<string>();
    const news = (key: string) => {
      const buried = this.tombstones.get(key);
      if (buried !== undefined && buried > asked) return false;
      this.tombstones.delete(key);
      keep.add(key);
      return true;
    };
    for (const lock of locks) {
      const key = keyOf(lock);
      // a lock is its token: a renewed lease is the same lock
      if (news(key) && !this.lockMap.has(key)) this.put(lock, true);
    }
    for (const waiter of waiters) {
      const key = keyOf(waiter);
      if (news(key) && this.waiterMap.get(key)?.position !== waiter.position) this.put(waiter, true);
    }
    for (const key of [...this.lockMap.keys(), ...this.waiterMap.keys()]) if (!keep.has(key)) this.drop(key, null);
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
    if (this.drop(keyOf(record), own ? null : ++this.clock)) this.changed();
  }

  /** Applies a create/update/destroy frame. */
  apply(frame: ChangeFrame): void {
    const record: Stored | undefined = frame.watchable;
    // a frame without an identity is dropped
    if (!record || typeof record.type !== 'string' || record.param == null) return;
    const key = keyOf(record);
    // a create is news of a new record (an id can be used again on some databases)
    if (frame.type === 'create') this.tombstones.delete(key);
    const changed = frame.type === 'destroy' ? this.drop(key, ++this.clock) : this.put(record);
    if (changed) this.changed();
  }

  private bury(key: string, at: number): void {
    if (this.tombstones.size >= TOMBSTONES && !this.tombstones.has(key)) {
      const oldest = this.tombstones.keys().next();
      if (!oldest.done) this.tombstones.delete(oldest.value);
    }
    this.tombstones.delete(key);
    this.tombstones.set(key, at);
  }

  /** Notes that a record of the tree changed: the next view patches its lists. */
  private touched(key: string, was: Stored | undefined): void {
    if (!this.pending.has(key)) this.pending.set(key, this.treeRecord(was) ?? undefined);
  }

  /** Stores a record; `fromSnapshot` skips the tombstone check (`reset` did it). False when nothing changed. */
  private put(record: Stored, fromSnapshot = false): boolean {
    const key = keyOf(record);
    if (!fromSnapshot && this.tombstones.has(key)) return false;
    // a lock or waiter on a deleted record is gone with it
    const on = holdsOn(record);
    if (on !== null && this.tombstones.has(on)) return false;
    const current = this.records.get(key);
    if (current === record) return false;
    const incoming = versionOf(record);
    const version = versionOf(current);
    if (incoming !== undefined && version !== undefined && incoming < version) return false;
    // a snapshot's copy of what the store has (the same version) keeps the store's object
    if (fromSnapshot && incoming !== undefined && incoming === version && holdsOn(record) === null) return false;
    const lock = record.type === 'Lock' ? lockIn(record) : null;
    if (record.type === 'Lock') {
      if (!lock) return false;
      // one lock per record: a new holding replaces the previous one
      const other = this.lockFor.get(keyOf(lock.lockable));
      if (other && other !== key) {
        this.records.delete(other);
        this.lockMap.delete(other);
      }
      this.records.set(key, record);
      // sound: a lock frame that is not a destroy carries a held lock
      this.lockMap.set(key, lock);
      this.lockFor.set(keyOf(lock.lockable), key);
      this.locksChanged = true;
      return true;
    }
    const waiter = waiterIn(record);
    this.records.set(key, record);
    if (waiter) {
      // sound: a waiter frame that is not a destroy carries a live waiter
      this.waiterMap.set(key, waiter);
      this.waitersChanged = true;
      return true;
    }
    if (record.type === 'Case') {
      if (this.caseKey !== key) {
        this.caseKey = key;
        // external records are the case's children: they are placed again
        this.reindex();
      }
      this.caseChanged = true;
      return true;
    }
    const tree = this.treeRecord(record);
    if (tree) {
      this.touched(key, current);
      this.index(key, tree);
    }
    return true;
  }

  /** Takes a record out with everything hanging off it; buried at `at` (null: not buried). */
  private drop(key: string, at: number | null): boolean {
    if (at !== null) this.bury(key, at);
    const was = this.records.get(key);
    if (!was || !this.records.delete(key)) return false;
    if (this.lockMap.delete(key)) {
      const lock = lockIn(was);
      if (lock && this.lockFor.get(keyOf(lock.lockable)) === key) this.lockFor.delete(keyOf(lock.lockable));
      this.locksChanged = true;
      return true;
    }
    if (this.waiterMap.delete(key)) {
      this.waitersChanged = true;
      return true;
    }
    if (key === this.caseKey) this.caseChanged = true;
    if (this.treeRecord(was)) this.touched(key, was);
    // what hangs off it goes too: its lock, its line, its children (and theirs)
    const lockKey = this.lockFor.get(key);
    if (lockKey) this.drop(lockKey, null);
    for (const [k, w] of [...this.waiterMap]) if (keyOf(w.lockable) === key) this.drop(k, null);
    const children = this.kids.get(key);
    this.unindex(key);
    if (children) {
      this.kids.delete(key);
      for (const child of [...children]) this.drop(child, at ?? this.clock);
    }
    return true;
  }

  /** The current view; the same object until something changes. */
  getView = (): CaseView<R> => {
    if (this.view) return this.view;
    const prev = this.previous;
    const tree = this.treeView(prev);
    const locks = this.locksChanged || !prev ? this.locks() : prev.locks;
    let lockOn = prev?.lockOn ?? {};
    if (this.locksChanged || !prev) {
      const next: Record<string, Lock> = {};
      for (const lock of locks) next[keyOf(lock.lockable)] = lock;
      lockOn = shareMap(prev?.lockOn, next);
    }
    const containerLockOn =
      this.locksChanged || this.moved || !prev ? shareMap(prev?.containerLockOn, this.containerLocks(locks, tree.children)) : prev.containerLockOn;
    this.moved = false;
    let waiters = prev?.waiters ?? [];
    let lineOn = prev?.lineOn ?? {};
    if (this.waitersChanged || !prev) {
      waiters = share(prev?.waiters, inLine([...this.waiterMap.values()]));
      const lines: Record<string, Waiter[]> = {};
      for (const waiter of waiters) (lines[keyOf(waiter.lockable)] ??= []).push(waiter);
      for (const [key, line] of Object.entries(lines)) lines[key] = share(prev?.lineOn[key], line);
      lineOn = shareMap(prev?.lineOn, lines);
    }
    const stored = this.caseKey ? this.records.get(this.caseKey) : undefined;
    const kase = stored ? caseIn(stored) : null;
    this.locksChanged = this.waitersChanged = this.caseChanged = false;
    // sound: each list holds the records the server sent under that type name, R[type] by R's contract
    this.view = {
      case: kase,
      role: this.role,
      schema: this.schema,
      records: tree.records as CaseView<R>['records'],
      children: tree.children as CaseView<R>['children'],
      locks: share(prev?.locks, locks),
      lockOn,
      containerLockOn,
      waiters,
      lineOn,
      onlineUsers: this.onlineUsers,
    };
    this.previous = this.view;
    return this.view;
  };

  /** The records and children of the next view: the last view's, patched where records changed. */
  private treeView(prev: CaseView<R> | null): { records: Lists; children: Record<string, Lists> } {
    if (this.rebuild || !prev) return this.rebuilt(prev);
    // sound: the last view's lists, of the same shapes
    const prevRecords = prev.records as Lists;
    const prevChildren = prev.children as Record<string, Lists>;
    if (this.pending.size === 0) return { records: prevRecords, children: prevChildren };
    if (this.pending.size > this.placeOf.size / REBUILD_SHARE + 16) return this.rebuilt(prev);
    const touched = new Set<string>();
    const list = (id: string): AnyRecord[] => {
      let items = this.lists.get(id) ?? [];
      if (!this.owned.has(items)) {
        items = items.slice();
        this.owned.add(items);
        this.lists.set(id, items);
      }
      touched.add(id);
      return items;
    };
    const take = (id: string, record: AnyRecord) => {
      const items = list(id);
      let at = search(items, record, this.order(record.type));
      if (at < 0 || items[at] !== record) at = items.indexOf(record);
      if (at >= 0) items.splice(at, 1);
    };
    const put = (id: string, record: AnyRecord) => {
      const items = list(id);
      const at = search(items, record, this.order(record.type));
      items.splice(at < 0 ? -at - 1 : at, at < 0 ? 0 : 1, record);
    };
    for (const [key, was] of this.pending) {
      const now = this.treeRecord(this.records.get(key));
      const placeNow = now ? this.placeOf.get(key) : undefined;
      if (was === now) continue;
      const placeWas = was ? this.placedIn(prev, was) : null;
      const order = this.order((now ?? was)!.type);
      // the same place and the same sort key: the new object takes the old one's slot
      if (was && now && placeWas && placeNow && placeWas.parent === placeNow.parent && order(was, now) === 0) {
        for (const id of this.idsOf(placeNow)) {
          const items = list(id);
          let at = search(items, was, order);
          if (at < 0 || items[at] !== was) at = items.indexOf(was);
          if (at >= 0) items[at] = now;
          else put(id, now);
        }
        continue;
      }
      this.moved = true;
      if (was && placeWas) for (const id of this.idsOf(placeWas)) take(id, was);
      if (now && placeNow) for (const id of this.idsOf(placeNow)) put(id, now);
    }
    this.pending.clear();
    let records = prevRecords;
    let children = prevChildren;
    const copied = new Set<string>();
    for (const id of touched) {
      const items = this.lists.get(id) ?? [];
      const sep = id.indexOf(SEP);
      if (sep < 0) {
        if (records === prevRecords) records = { ...prevRecords };
        if (items.length) records[id] = items;
        else delete records[id];
        continue;
      }
      const parent = id.slice(0, sep);
      const type = id.slice(sep + 1);
      if (children === prevChildren) children = { ...prevChildren };
      if (!copied.has(parent)) {
        children[parent] = { ...prevChildren[parent] };
        copied.add(parent);
      }
      const byType = children[parent]!;
      if (items.length) byType[type] = items;
      else delete byType[type];
      if (Object.keys(byType).length === 0) delete children[parent];
    }
    this.owned = new WeakSet();
    return { records, children };
  }

  /** The lists a record placed at `place` is in. */
  private idsOf(place: Place): string[] {
    return place.parent ? [place.type, `${place.parent}${SEP}${place.type}`] : [place.type];
  }

  /** Where the last view listed a record: its type's list, and the parent's list that holds it. */
  private placedIn(prev: CaseView<R>, record: AnyRecord): Place | null {
    const place = this.placeFor(record);
    const byType = place.parent ? (prev.children as Record<string, Lists>)[place.parent]?.[record.type] : undefined;
    return { type: record.type, parent: byType ? place.parent : null };
  }

  /** Every list built from the records, sharing what did not change with the last view. */
  private rebuilt(prev: CaseView<R> | null): { records: Lists; children: Record<string, Lists> } {
    this.rebuild = false;
    this.moved = true;
    this.pending.clear();
    const records: Record<string, AnyRecord[]> = {};
    const children: Record<string, Record<string, AnyRecord[]>> = {};
    for (const [key, record] of this.records) {
      const r = this.treeRecord(record);
      if (r) (records[r.type] ??= []).push(r);
      else continue;
      const place = this.placeOf.get(key);
      if (!place) this.index(key, r);
    }
    this.lists.clear();
    for (const [type, list] of Object.entries(records)) {
      list.sort(this.order(type));
      for (const r of list) {
        const parent = this.placeOf.get(keyOf(r))?.parent;
        if (parent) ((children[parent] ??= {})[type] ??= []).push(r);
      }
    }
    const prevRecords = prev?.records as Lists | undefined;
    const prevChildren = prev?.children as Record<string, Lists> | undefined;
    const shareLists = (p: Lists | undefined, n: Record<string, AnyRecord[]>): Lists => {
      const out: Record<string, AnyRecord[]> = {};
      for (const [type, list] of Object.entries(n)) out[type] = share(p?.[type], list);
      // sound: the lists are the same records under the same type names
      return shareMap(p as Record<string, AnyRecord[]> | undefined, out);
    };
    const outRecords = shareLists(prevRecords, records);
    const outChildren: Record<string, Lists> = {};
    for (const [parent, byType] of Object.entries(children)) outChildren[parent] = shareLists(prevChildren?.[parent], byType);
    for (const [type, list] of Object.entries(outRecords)) if (list) this.lists.set(type, list);
    for (const [parent, byType] of Object.entries(outChildren)) {
      for (const [type, list] of Object.entries(byType)) if (list) this.lists.set(`${parent}${SEP}${type}`, list);
    }
    this.owned = new WeakSet();
    return { records: outRecords, children: shareMap(prevChildren, outChildren) };
  }

  /**
   * The deep locks on records' containers, by the contained record's key:
   * for each deep lock, everything under its record (the nearest deep lock
   * wins). It walks the subtrees of the deep locks only.
   */
  private containerLocks(locks: Lock[], children: Record<string, Lists>): Record<string, Lock> {
    const containerLockOn: Record<string, Lock> = {};
    const deep = locks.filter(isDeep);
    if (!this.schema || deep.length === 0) return containerLockOn;
    const get = (k: string) => this.records.get(k) as AnyRecord | undefined;
    const depth = (key: string): number => {
      const record = get(key);
      return record && record.type !== 'Case' ? this.schema!.containerKeys(record, get).length : 0;
    };
    // the outermost first: a deep lock nearer to a record overrides one further up
    const ordered = deep.map((lock) => ({ lock, key: keyOf(lock.lockable) })).sort((a, b) => depth(a.key) - depth(b.key));
    for (const { lock, key } of ordered) {
      if (key.startsWith('Case/')) {
        // the case's lock covers every record of the case, wherever its parent is
        for (const record of this.placeOf.keys()) if (recordIn(this.records.get(record)!)) containerLockOn[record] = lock;
        continue;
      }
      const stack = [key];
      while (stack.length) {
        const at = stack.pop()!;
        for (const list of Object.values(children[at] ?? {})) {
          for (const child of list ?? []) {
            const k = keyOf(child);
            if (recordIn(child)) containerLockOn[k] = lock;
            stack.push(k);
          }
        }
      }
    }
    return containerLockOn;
  }
}
