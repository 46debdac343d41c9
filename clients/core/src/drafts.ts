/**
 * Drafts: what a person typed into a record's form and has not saved, kept
 * by the kit, keyed by record, outside any component. A form that scrolls
 * out of a virtualized list (and unmounts) comes back with its text; what
 * ends a draft is the app's say (Save, Cancel, the person's Escape), never
 * a component going away. Framework-free: `subscribe` and `get` are ready
 * for React's `useSyncExternalStore` (see `useDraft` in `@baton/react`).
 */
import { keyOf, type Listener } from './store.js';
import type { Identity, TargetRef } from './types.js';

/** A record as a draft starts from: its identity and the version the person saw. */
export type DraftBase = TargetRef & Partial<Identity> & { version?: number };

/** One record's draft. Immutable: every change makes a new one (the same object until something changes). */
export interface Draft {
  /** The record's key, `Ticket/12`. */
  readonly key: string;
  /** The record as the draft started from (or was last rebased on): save with its version as `If-Match`. */
  readonly base: DraftBase;
  /** The form's text when the draft started, field by field. */
  readonly initial: Readonly<Record<string, string>>;
  /** The person's text now, field by field. */
  readonly values: Readonly<Record<string, string>>;
  /** The fields whose text differs from `initial`, in the order they were first changed. */
  readonly changed: readonly string[];
}

const NO_DRAFTS: readonly Draft[] = Object.freeze([]);

function make(key: string, base: DraftBase, initial: Record<string, string>, values: Record<string, string>, order: readonly string[] = []): Draft {
  const changed = [...order.filter((f) => values[f] !== initial[f]), ...Object.keys(values).filter((f) => !order.includes(f) && values[f] !== initial[f])];
  return Object.freeze({ key, base, initial: Object.freeze({ ...initial }), values: Object.freeze({ ...values }), changed: Object.freeze(changed) });
}

export interface DraftStoreOptions {
  /** Told when the person types in a record's draft (the client renews the lock's activity). */
  onInput?: (record: TargetRef) => void;
}

/** The tab's drafts, by record. */
export class DraftStore {
  private drafts = new Map<string, Draft>();
  private listeners = new Set<Listener>();
  private list: readonly Draft[] = NO_DRAFTS;
  private unload: { target: EventTarget; handler: (event: Event) => void; on: boolean } | null = null;

  constructor(private readonly options: DraftStoreOptions = {}) {}

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  private changed(): void {
    this.list = this.drafts.size ? Object.freeze([...this.drafts.values()]) : NO_DRAFTS;
    this.syncUnload();
    for (const listener of [...this.listeners]) listener();
  }

  /** A record's draft (by the record or its key), or undefined. */
  get(record: TargetRef | string): Draft | undefined {
    return this.drafts.get(typeof record === 'string' ? record : keyOf(record));
  }

  /** Every draft, in the order they started; the same array until one changes. */
  all = (): readonly Draft[] => this.list;

  /** The drafts with changes. */
  withChanges(): Draft[] {
    return this.list.filter((d) => d.changed.length > 0);
  }

  /** Whether any draft differs from what it started from (then leaving the page should ask). */
  get hasChanges(): boolean {
    return this.list.some((d) => d.changed.length > 0);
  }

  /**
   * Starts a record's draft from `initial` (the form's text of each field),
   * on the record as the person sees it; a draft the record has already is
   * kept as it is and returned.
   */
  open(record: DraftBase, initial: Record<string, string>): Draft {
    const key = keyOf(record);
    const existing = this.drafts.get(key);
    if (existing) return existing;
    const draft = make(key, record, initial, initial);
    this.drafts.set(key, draft);
    this.changed();
    return draft;
  }

  /** The person typed: a field's text in a record's draft (nothing without a draft). */
  set(record: TargetRef, field: string, text: string): Draft | undefined {
    const key = keyOf(record);
    const draft = this.drafts.get(key);
    if (!draft) return undefined;
    this.options.onInput?.(record);
    if (draft.values[field] === text) return draft;
    const next = make(key, draft.base, draft.initial, { ...draft.values, [field]: text }, draft.changed);
    this.drafts.set(key, next);
    this.changed();
    return next;
  }

  /**
   * Moves a draft onto a newer version of its record (the person carries on
   * after someone else's save): the fields the person changed keep their
   * text, the others take `initial`'s.
   */
  rebase(base: DraftBase, initial: Record<string, string>): Draft | undefined {
    const key = keyOf(base);
    const draft = this.drafts.get(key);
    if (!draft) return undefined;
    const values = { ...initial };
    for (const field of draft.changed) values[field] = draft.values[field] ?? '';
    const next = make(key, base, initial, values, draft.changed);
    this.drafts.set(key, next);
    this.changed();
    return next;
  }

  /** Starts a record's draft over from `initial` on `base`, dropping the person's changes ("use the current text"). */
  restart(base: DraftBase, initial: Record<string, string>): Draft {
    const key = keyOf(base);
    const draft = make(key, base, initial, initial);
    this.drafts.set(key, draft);
    this.changed();
    return draft;
  }

  /** Drops a record's draft (saved, cancelled, or the person chose to discard it). */
  discard(record: TargetRef | string): boolean {
    const removed = this.drafts.delete(typeof record === 'string' ? record : keyOf(record));
    if (removed) this.changed();
    return removed;
  }

  /**
   * Asks before the page is left or reloaded while a draft has changes
   * (`beforeunload`); the listener is there only while one does, so a page
   * without changes stays eligible for the back/forward cache. Returns a
   * function that stops asking.
   */
  askBeforeUnload(target: EventTarget | undefined = typeof addEventListener === 'function' ? globalThis : undefined): () => void {
    if (!target || this.unload) return () => {};
    const handler = (event: Event) => {
      if (!this.hasChanges) return;
      event.preventDefault();
      // older browsers ask only when returnValue is set
      Reflect.set(event, 'returnValue', '');
    };
    this.unload = { target, handler, on: false };
    this.syncUnload();
    return () => {
      const unload = this.unload;
      if (unload?.on) unload.target.removeEventListener('beforeunload', unload.handler);
      this.unload = null;
    };
  }

  private syncUnload(): void {
    const unload = this.unload;
    if (!unload) return;
    const want = this.hasChanges;
    if (want === unload.on) return;
    unload.on = want;
    if (want) unload.target.addEventListener('beforeunload', unload.handler);
    else unload.target.removeEventListener('beforeunload', unload.handler);
  }
}
