import type {
  Card,
  Case,
  CaseDetail,
  ChangeFrame,
  Edgenote,
  EndedLock,
  Lock,
  OnlineUser,
  Page,
  RecordKey,
  Role,
  Waiter,
  Watchable,
} from './types.js';
import { inLine, waiterIn } from './line.js';

/** `${type}/${param}`: how every record is keyed. */
export const keyOf = (record: Pick<RecordKey, 'type' | 'param'>): string => `${record.type}/${record.param}`;

export type Listener = () => void;

export interface PageView extends Page {
  cards: Card[];
}

/** What an app renders: a consistent, immutable view of one case. */
export interface CaseView {
  case: Case | null;
  role: Role | null;
  pages: PageView[];
  edgenotes: Edgenote[];
  locks: Lock[];
  /** The lock on each locked record, by the record's key. */
  lockOn: Record<string, Lock>;
  /**
   * The deep lock (`depth: infinity`) on the page or case that encloses a
   * record, by the record's key: a card under a deep-locked page or case, a
   * page or edgenote under a deep-locked case. Whoever holds it holds the
   * record too (see `enclosingKeys`).
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

/** The kinds of record the store hands out, by their `type` tag. */
export interface RecordKinds {
  Case: Case;
  Page: Page;
  Card: Card;
  Edgenote: Edgenote;
  Lock: Lock;
  Waiter: Waiter;
}

/** The watchable as a lock (a held one, or an ended one from a `destroy` frame), or null. */
export function lockIn(record: Stored): Lock | EndedLock | null {
  return record.type === 'Lock' && 'token' in record && 'lockable' in record && record.lockable ? record : null;
}

/** The record a lock or a waiter is about, by its key; null for anything else. */
const holdsOn = (record: Stored): string | null => {
  const on = lockIn(record) ?? waiterIn(record);
  return on ? keyOf(on.lockable) : null;
};

/**
 * Each kind, narrowed from a watchable on its `type` tag; the fields checked
 * with it tell the kinds apart while the document types `type` `string`
 * (and keep a destroyed record's bare identity out).
 */
const KINDS: { [K in keyof RecordKinds]: (record: Stored) => RecordKinds[K] | null } = {
  Case: (r) => (r.type === 'Case' && 'slug' in r && 'title' in r ? r : null),
  Page: (r) => (r.type === 'Page' && 'title' in r && 'position' in r ? r : null),
  Card: (r) => (r.type === 'Card' && 'pageId' in r ? r : null),
  Edgenote: (r) => (r.type === 'Edgenote' && 'caption' in r ? r : null),
  Lock: (r) => lockIn(r),
  Waiter: (r) => waiterIn(r),
};

/**
 * The records whose deep lock covers this one, nearest first: a card's page
 * and case; a page's or an edgenote's case; nothing for a case. This is the
 * subtree rule of baton's deep locks, and the one place the kit knows it.
 */
export function enclosingKeys(record: Stored): string[] {
  const caseKey = 'caseId' in record && typeof record.caseId === 'number' ? `Case/${record.caseId}` : null;
  if (!caseKey || record.type === 'Lock' || record.type === 'Waiter') return [];
  const card = KINDS.Card(record);
  return card ? [`Page/${card.pageId}`, caseKey] : [caseKey];
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

const byPosition = (a: { position: number; id: number }, b: { position: number; id: number }) =>
  a.position - b.position || a.id - b.id;

/**
 * A normalized cache of one case, keyed by `${type}/${param}`. It applies
 * snapshots and create/update/destroy frames and tells subscribers.
 */
export class CaseStore {
  private records = new Map<string, Stored>();
  private onlineUsers: OnlineUser[] = [];
  private role: Role | null = null;
  private listeners = new Set<Listener>();
  private view: CaseView | null = null;

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
   * The record under a key, e.g. `get('Card/12')`. The type argument is the
   * caller's word for what its key holds (`get<Card>('Card/12')`); without
   * one, the result is the checked union.
   */
  get<T extends Stored = Stored>(key: string): T | undefined {
    // unchecked by design: the caller names the kind its `${type}/` key prefix stands for
    return this.records.get(key) as T | undefined;
  }

  /** Every record of a kind, e.g. `all('Card')`. */
  all<K extends keyof RecordKinds>(type: K): RecordKinds[K][] {
    const narrow = KINDS[type];
    const found: RecordKinds[K][] = [];
    for (const record of this.records.values()) {
      const match = narrow(record);
      if (match) found.push(match);
    }
    return found;
  }

  /** The lock on a record, if any. */
  lockOn(record: Pick<RecordKey, 'type' | 'param'>): Lock | undefined {
    const key = keyOf(record);
    return this.all('Lock').find((lock) => keyOf(lock.lockable) === key);
  }

  /** Replaces everything with a fresh `GET /cases/:slug`. */
  reset(detail: CaseDetail): void {
    this.records.clear();
    const { pages, edgenotes, activeLocks, waiters, onlineUsers, role, ...kase } = detail;
    this.put(kase);
    for (const { cards, ...page } of pages) {
      this.put(page);
      for (const card of cards) this.put(card);
    }
    for (const note of edgenotes) this.put(note);
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

  /** Inserts or replaces a record, unless the cache already has a newer version. */
  upsert(record: Stored): void {
    if (this.put(record)) this.changed();
  }

  remove(record: Pick<RecordKey, 'type' | 'param'>): void {
    if (this.drop(keyOf(record))) this.changed();
  }

  /** Applies a create/update/destroy frame. */
  apply(frame: ChangeFrame): void {
    const record: Stored | undefined = frame.watchable;
    // a frame without an identity is dropped
    if (!record || typeof record.type !== 'string' || record.param == null) return;
    const changed = frame.type === 'destroy' ? this.drop(keyOf(record)) : this.put(record);
    if (changed) this.changed();
  }

  private put(record: Stored): boolean {
    const key = keyOf(record);
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
    return true;
  }

  private drop(key: string): boolean {
    const record = this.records.get(key);
    if (!record) return false;
    this.records.delete(key);
    // what hangs off it goes too: a page's cards, a record's lock and line
    const page = KINDS.Page(record);
    for (const [k, r] of this.records) {
      const card = page && KINDS.Card(r);
      if (holdsOn(r) === key || (page && card && card.pageId === page.id)) this.records.delete(k);
    }
    return true;
  }

  /** The current view; the same object until something changes. */
  getView = (): CaseView => {
    if (this.view) return this.view;
    const cards = this.all('Card').sort(byPosition);
    const locks = this.all('Lock');
    const lockOn: Record<string, Lock> = {};
    for (const lock of locks) lockOn[keyOf(lock.lockable)] = lock;
    const coverOn: Record<string, Lock> = {};
    if (locks.some(isDeep)) {
      for (const [key, record] of this.records) {
        const cover = enclosingKeys(record).map((k) => lockOn[k]).find(isDeep);
        if (cover) coverOn[key] = cover;
      }
    }
    const waiters = inLine(this.all('Waiter'));
    const lineOn: Record<string, Waiter[]> = {};
    for (const waiter of waiters) (lineOn[keyOf(waiter.lockable)] ??= []).push(waiter);
    this.view = {
      case: this.all('Case')[0] ?? null,
      role: this.role,
      pages: this.all('Page')
        .sort(byPosition)
        .map((page) => ({ ...page, cards: cards.filter((c) => c.pageId === page.id) })),
      edgenotes: this.all('Edgenote').sort((a, b) => a.id - b.id),
      locks,
      lockOn,
      coverOn,
      waiters,
      lineOn,
      onlineUsers: this.onlineUsers,
    };
    return this.view;
  };
}
