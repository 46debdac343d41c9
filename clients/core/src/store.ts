import type {
  Card,
  Case,
  CaseDetail,
  ChangeFrame,
  Edgenote,
  Lock,
  OnlineUser,
  Page,
  RecordKey,
  Identity,
  Role,
} from './types.js';

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
  onlineUsers: OnlineUser[];
}

type AnyRecord = Identity;

const byPosition = (a: { position: number; id: number }, b: { position: number; id: number }) =>
  a.position - b.position || a.id - b.id;

/**
 * A normalized cache of one case, keyed by `${type}/${param}`. It applies
 * snapshots and create/update/destroy frames and tells subscribers.
 */
export class CaseStore {
  private records = new Map<string, AnyRecord>();
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

  get<T = AnyRecord>(key: string): T | undefined {
    return this.records.get(key) as T | undefined;
  }

  /** Every record of a type, e.g. `all<Card>('Card')`. */
  all<T = AnyRecord>(type: string): T[] {
    return [...this.records.values()].filter((r) => r.type === type) as T[];
  }

  /** The lock on a record, if any. */
  lockOn(record: Pick<RecordKey, 'type' | 'param'>): Lock | undefined {
    const key = keyOf(record);
    for (const r of this.records.values()) {
      if (r.type === 'Lock' && keyOf((r as unknown as Lock).lockable) === key) return r as unknown as Lock;
    }
    return undefined;
  }

  /** Replaces everything with a fresh `GET /cases/:slug`. */
  reset(detail: CaseDetail): void {
    this.records.clear();
    const { pages, edgenotes, activeLocks, onlineUsers, role, ...kase } = detail;
    this.put(kase as Case);
    for (const { cards, ...page } of pages) {
      this.put(page as Page);
      for (const card of cards) this.put(card);
    }
    for (const note of edgenotes) this.put(note);
    for (const lock of activeLocks) this.put(lock);
    this.onlineUsers = onlineUsers;
    this.role = role as Role;
    this.changed();
  }

  /** Replaces the case's locks (the welcome frame carries them). */
  setLocks(locks: Lock[]): void {
    for (const [key, r] of this.records) if (r.type === 'Lock') this.records.delete(key);
    for (const lock of locks) this.put(lock);
    this.changed();
  }

  setOnlineUsers(onlineUsers: OnlineUser[]): void {
    this.onlineUsers = onlineUsers;
    this.changed();
  }

  /** Inserts or replaces a record, unless the cache already has a newer version. */
  upsert(record: AnyRecord): void {
    if (this.put(record)) this.changed();
  }

  remove(record: Pick<RecordKey, 'type' | 'param'>): void {
    if (this.drop(keyOf(record))) this.changed();
  }

  /** Applies a create/update/destroy frame. */
  apply(frame: ChangeFrame): void {
    const record = frame.watchable as AnyRecord;
    if (!record || typeof record.type !== 'string' || record.param == null) return;
    const changed = frame.type === 'destroy' ? this.drop(keyOf(record)) : this.put(record);
    if (changed) this.changed();
  }

  private put(record: AnyRecord): boolean {
    const key = keyOf(record);
    const existing = this.records.get(key);
    const incoming = (record as { version?: unknown }).version;
    const current = (existing as { version?: unknown } | undefined)?.version;
    if (typeof incoming === 'number' && typeof current === 'number' && incoming < current) return false;
    if (record.type === 'Lock') {
      if (!(record as unknown as Lock).lockable) return false;
      // one lock per record: a new holding replaces the previous one
      const on = keyOf((record as unknown as Lock).lockable);
      for (const [k, r] of this.records) {
        if (r.type === 'Lock' && k !== key && keyOf((r as unknown as Lock).lockable) === on) this.records.delete(k);
      }
    }
    this.records.set(key, record);
    return true;
  }

  private drop(key: string): boolean {
    const record = this.records.get(key);
    if (!record) return false;
    this.records.delete(key);
    // what hangs off it goes too: a page's cards, a record's lock
    for (const [k, r] of this.records) {
      const lock = r as unknown as Lock;
      if (
        (r.type === 'Lock' && lock.lockable && keyOf(lock.lockable) === key) ||
        (record.type === 'Page' && r.type === 'Card' && (r as unknown as Card).pageId === record.id)
      ) {
        this.records.delete(k);
      }
    }
    return true;
  }

  /** The current view; the same object until something changes. */
  getView = (): CaseView => {
    if (this.view) return this.view;
    const cards = this.all<Card>('Card').sort(byPosition);
    const locks = this.all<Lock>('Lock');
    const lockOn: Record<string, Lock> = {};
    for (const lock of locks) lockOn[keyOf(lock.lockable)] = lock;
    this.view = {
      case: this.all<Case>('Case')[0] ?? null,
      role: this.role,
      pages: this.all<Page>('Page')
        .sort(byPosition)
        .map((page) => ({ ...page, cards: cards.filter((c) => c.pageId === page.id) })),
      edgenotes: this.all<Edgenote>('Edgenote').sort((a, b) => a.id - b.id),
      locks,
      lockOn,
      onlineUsers: this.onlineUsers,
    };
    return this.view;
  };
}
