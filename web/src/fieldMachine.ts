/**
 * The editing state of one record's form, framework-free: a refused save's
 * outcome (a 422's message at each field it names, a 412's current record)
 * and what the form says. What the person typed is the kit's draft
 * (`client.drafts`, by record), so it outlives the form's component; the
 * lock lives in the kit too (`<Lockable>`). This module decides what the
 * form shows given all three. Everything here is a pure function.
 */
import {
  InvalidError,
  LockHeldError,
  LockLostError,
  LockedError,
  StaleVersionError,
  type Fields,
  type Lockable as LockableRecord,
  type Lock,
  type LockState,
  type Role,
  type User,
  type Waiter,
} from '@baton/client';
import type { LockableRenderProps } from '@baton/react';
import { ordinal } from './format';
import { lowerWords, textOfValue } from './schemaText';

/** The attribute a field edits: any declared field of the record's type. */
export type FieldName = string;

/** A form's text, field by field (a draft is text: numbers and booleans too). */
export type Drafts = Record<FieldName, string>;

/**
 * What people call the record: its accessible name ("Card 2", "The
 * harbour"), in notices what it is ("this card"), and the record it belongs
 * to ("this card").
 */
export interface Words {
  label: string;
  noun: string;
  thing?: string;
}

export interface Notice {
  kind: 'error' | 'info';
  text: string;
}

/** The form's own state: what a refused save said, and whether one is on its way. */
export interface FormState {
  /** 412 `stale_version`: the record as it is now, shown beside the draft. */
  stale: LockableRecord | null;
  notice: Notice | null;
  /** A 422's message for each field it names, shown at that field. */
  errors: Record<FieldName, string>;
  saving: boolean;
}

/** The form's state with the kit's draft of the record: what the view is made from. */
export interface FieldState extends FormState {
  /** The person's text, field by field, while the form is open; kept when the lock is lost. */
  draft: Drafts | null;
  /** The version the draft started from: a save sends its version as If-Match. */
  base: LockableRecord | null;
}

export type FormEvent =
  | { type: 'saving' }
  | { type: 'saved' }
  /** A save was refused; `current` is the record now, for a stale version; `errors` a 422's, by field. */
  | { type: 'refused'; text: string; current?: LockableRecord | undefined; errors?: Record<FieldName, string> | undefined }
  /** The person typed in a field: its 422 message goes. */
  | { type: 'edited'; field: FieldName }
  /** The edit ended: what the last save said goes with it. */
  | { type: 'closed' }
  /** The person chose the current text over a stale draft. */
  | { type: 'usedCurrent' }
  | { type: 'notice'; notice: Notice | null };

export const initialForm: FormState = {
  stale: null,
  notice: null,
  errors: {},
  saving: false,
};

/** No draft: the form shows the record. */
export const initialField: FieldState = { ...initialForm, draft: null, base: null };

const NO_ERRORS: Record<FieldName, string> = {};

export function formReducer(state: FormState, event: FormEvent): FormState {
  switch (event.type) {
    case 'saving':
      return { ...state, saving: true, notice: null, errors: NO_ERRORS };
    case 'saved':
      return { ...state, saving: false };
    case 'refused':
      return {
        ...state,
        saving: false,
        notice: { kind: 'error', text: event.text },
        errors: event.errors ?? NO_ERRORS,
        stale: event.current ?? state.stale,
      };
    case 'edited': {
      if (!(event.field in state.errors)) return state;
      const { [event.field]: _fixed, ...errors } = state.errors;
      return { ...state, errors };
    }
    case 'closed':
      return state.stale === null && state.errors === NO_ERRORS ? state : { ...state, stale: null, errors: NO_ERRORS };
    case 'usedCurrent':
      return { ...state, stale: null, notice: null };
    case 'notice':
      return { ...state, notice: event.notice };
  }
}

/** Whether Escape should ask before it drops the draft: it differs from the record. */
export const asksBeforeDropping = (view: Pick<FieldView, 'editing' | 'dirty'>): boolean => view.editing && view.dirty;

/** The field's value in a record as text (empty when the record has no such field, or it is null). */
export function textOf(record: LockableRecord, field: FieldName): string {
  return field in record ? textOfValue((record as Record<string, unknown>)[field]) : '';
}

/** A record's values of `fields` as text. */
export function textsOf(record: LockableRecord, fields: readonly FieldName[]): Drafts {
  const out: Drafts = {};
  for (const field of fields) out[field] = textOf(record, field);
  return out;
}

/** The fields of a draft that differ from `base`. */
export function changedFields(draft: Drafts, base: LockableRecord): FieldName[] {
  return Object.keys(draft).filter((field) => draft[field] !== textOf(base, field));
}

/**
 * What a save sends: the fields changed from `base`, each turned into its
 * value by `parse` (a number, a boolean, null).
 */
export function changeOf(draft: Drafts, base: LockableRecord, parse: (field: FieldName, text: string) => unknown = (_f, t) => t): Fields {
  const out: Fields = {};
  for (const field of changedFields(draft, base)) out[field] = parse(field, draft[field] ?? '');
  return out;
}

/** What a refused save tells the person: the record now for a stale version, each field's message for a 422. */
export function refusal(
  error: unknown,
  words: Words,
  message: string,
  field?: FieldName,
): { text: string; current?: LockableRecord; errors?: Record<FieldName, string> } {
  if (error instanceof InvalidError && error.fields.length > 0) {
    // 422: each field's message at that field; the notice repeats the one asked about, else the first
    const errors: Record<FieldName, string> = {};
    for (const f of error.fields) errors[f.field] ??= f.message;
    const problem = error.fields.find((f) => f.field === field) ?? error.fields[0]!;
    return { text: `Not saved: ${problem.message}`, errors };
  }
  if (error instanceof StaleVersionError) {
    return {
      text: `Not saved: ${words.label} was changed by someone else. Choose which text to keep.`,
      current: error.current,
    };
  }
  if (error instanceof LockedError) {
    const doing = isDeep(error.lock) ? `restructuring ${deepNoun(error.lock)}` : `editing ${words.noun}`;
    return {
      text: `Not saved: ${error.lock.user.name} is ${doing} now. Your text is kept below; copy it and try again when they are done.`,
    };
  }
  if (error instanceof LockLostError) {
    return {
      text: `Not saved: your lock on ${words.label} was taken over and the text has changed since. Your text is kept below.`,
    };
  }
  return { text: `Not saved: ${message}` };
}

/** A lock on a record or case with everything in it (`depth: infinity`): a restructuring. */
export const isDeep = (lock: Lock | null | undefined): boolean => lock?.depth === 'infinity';

/** What a deep lock holds, for people: "this page", "this case", "this column". */
export const deepNoun = (lock: Lock): string => `this ${lowerWords(lock.lockable.type)}`;

/** What a refused move tells the person (the kit's typed error, the server's message). */
export function moveRefusal(error: unknown, label: string, message: string): string {
  if (error instanceof LockedError && isDeep(error.lock)) {
    return `Not moved: ${error.lock.user.name} is restructuring ${error.lock.lockable.type === 'Case' ? 'the case' : `that ${lowerWords(error.lock.lockable.type)}`}. ${message}`;
  }
  if (error instanceof LockedError || error instanceof LockHeldError) {
    const holders = error instanceof LockHeldError ? error.holders.map((u) => u.name).join(', ') : error.holder.name;
    const doing = isDeep(error.lock) ? `restructuring its ${lowerWords(error.lock.lockable.type)}` : `editing ${label}`;
    return `Not moved: ${holders} ${error instanceof LockHeldError && error.holders.length > 1 ? 'are' : 'is'} ${doing}. ${message}`;
  }
  return `Not moved: ${message}`;
}

/** The lock as the field sees it: the part of `<Lockable>`'s render props it reads. */
export type LockView = Pick<
  LockableRenderProps,
  'state' | 'holder' | 'lock' | 'lostTo' | 'lostReason' | 'outrankedBy' | 'busy'
> &
  Partial<Pick<LockableRenderProps, 'position' | 'waiters' | 'lineEnded'>>;

/** A place in a waiting line, for people: "You are next", "2nd in line". */
export function placeInLine(position: number): string {
  return position <= 1 ? 'You are next' : `${ordinal(position)} in line`;
}

export interface FieldContext {
  /** The fields the form edits. */
  fields: readonly FieldName[];
  /** The person's role lets them edit, and the tab is live. */
  editable: boolean;
  me: User;
  role: Role | null;
  /** The record's values now, as text. */
  value: Drafts;
  /** This tab holds the record's lock for a move (a drag, or a move button), not to edit it. */
  moving?: boolean;
  /** The type's lock policy lets the person "Edit anyway" (default true). */
  takeover?: boolean;
  /** The type's lock policy has waiting lines (default true). */
  waitable?: boolean;
}

/** What the view shows, derived from the field's state, its lock and its context. */
export interface FieldView {
  /** The editor is open: this tab holds the lock, may write, and has a draft. */
  editing: boolean;
  /** The draft differs from the version it started from. */
  dirty: boolean;
  /** The values in the form: the draft while editing, the record's otherwise. */
  shown: Drafts;
  busy: boolean;
  /** Unsaved changes of a tab that lost its lock (or may no longer write), field by field: kept in a panel. */
  lostDraft: Drafts | null;
  /** Who outranks the person, so "Edit anyway" is not offered for this lock. */
  outranked: string | null;
  /** Someone else's lock: the badge's text. */
  badge: string | null;
  canEdit: boolean;
  canEditAnyway: boolean;
  /** Someone else holds it: the person may wait for it ("Notify me / wait"). */
  canWait: boolean;
  /** This tab's place in the line, for people ("You are next", "2nd in line"), while it waits. */
  place: string | null;
  /** Who else is waiting for the record, in line order (the holder sees who is next). */
  line: Waiter[];
  /** This tab's place in the line ended without it asking. */
  lineNote: string | null;
  /** Nobody holds the record now: the person may lock it again and carry on with their text. */
  canContinue: boolean;
  /** The banner of a lost lock. */
  lostBanner: string | null;
  /** `unlocked`, `owned`, `locked`, `waiting`, `lost`, or `ended` for a lock of a tab that may no longer write. */
  look: LockState | 'ended';
  /** This tab holds the record deeply (restructuring its page or case): not an edit of the field. */
  restructuring: boolean;
}

export function viewOf(state: FieldState, lock: LockView, context: FieldContext, words: Words): FieldView {
  const { editable, me, role, value, moving = false, takeover = true, waitable = true } = context;
  const { holder } = lock;
  // this tab's deep lock on the record, or its lock for a move, is not an edit of the text
  const restructuring = lock.state === 'owned' && isDeep(lock.lock);
  // a stopped tab (kicked, signed out, case deleted) edits nothing, even if it still thinks it holds the lock
  const editing = editable && lock.state === 'owned' && state.draft !== null && !restructuring && !moving;
  const changed = state.draft !== null && state.base ? changedFields(state.draft, state.base) : [];
  const dirty = editing && changed.length > 0;
  // someone else holds it (this tab may be waiting for it)
  const theirs = (lock.state === 'locked' || lock.state === 'waiting') && lock.lock !== null;
  const waiting = lock.state === 'waiting';
  // someone restructures the record's page or case (or the page itself): no takeover of it here, no line
  const deep = theirs && isDeep(lock.lock);
  // a site admin outranks every case role (managers see the holder's `admin` flag; editors learn it from a refusal)
  const outranked = !theirs
    ? null
    : (lock.outrankedBy?.name ??
      (holder?.admin === true && role !== 'site admin' && holder.id !== me.id ? holder.name : null));
  const lostDraft =
    (lock.state === 'lost' || !editable) && state.draft !== null && changed.length > 0
      ? Object.fromEntries(changed.map((f) => [f, state.draft?.[f] ?? '']))
      : null;
  return {
    editing,
    dirty,
    shown: editing && state.draft !== null ? state.draft : value,
    busy: lock.busy || state.saving,
    lostDraft,
    outranked,
    badge:
      moving && lock.state === 'owned'
        ? `You are moving ${words.thing ?? words.noun}`
        : (theirs || lock.state === 'lost') && holder && lock.lock
          ? deep
            ? holder.id === me.id
              ? `You are restructuring ${deepNoun(lock.lock)} in another tab`
              : `${holder.name} is restructuring ${deepNoun(lock.lock)}`
            : holder.id === me.id && lock.state !== 'lost'
              ? 'You are editing this in another tab'
              : `${holder.name} is editing`
          : null,
    canEdit: editable && lock.state === 'unlocked',
    canEditAnyway: editable && theirs && !deep && outranked === null && takeover,
    canWait: editable && theirs && !deep && !waiting && waitable,
    place: waiting ? placeInLine(lock.position ?? 1) : null,
    line: waiting ? [] : (lock.waiters ?? []),
    lineNote:
      lock.lineEnded && lock.lineEnded !== 'granted' && !waiting && lock.state !== 'owned'
        ? `Your place in line for ${words.label} ended (${lock.lineEnded}).`
        : null,
    canContinue: editable && lock.lock === null,
    lostBanner:
      lock.state !== 'lost'
        ? null
        : lock.lostTo
          ? `${lock.lostTo.name} took over ${words.noun}.`
          : `Your lock on ${words.label} ended (${lock.lostReason ?? 'expired'}).`,
    look: editable || lock.state !== 'owned' ? lock.state : 'ended',
    restructuring,
  };
}

/** Whether a click, Enter or "Edit" may take the lock now; after a loss only "Edit again with my text" may. */
export function canStart(state: LockState, editable: boolean, busy: boolean, afterLoss = false): boolean {
  return editable && !busy && state !== 'owned' && state !== 'waiting' && (state !== 'lost' || afterLoss);
}

/** What to announce when the field's lock goes from `before` to `lock.state` (null: nothing). */
export function lockAnnouncement(
  before: LockState,
  lock: Pick<LockView, 'state' | 'holder' | 'lostTo' | 'position'> & { lock?: Lock | null },
  words: Words,
  me: User,
  /** The place in line before, when it was waiting: moving up is news too. */
  positionBefore: number | null = null,
): string | null {
  if (before === 'waiting' && lock.state === 'waiting' && lock.position != null && positionBefore !== lock.position) {
    return `${placeInLine(lock.position)} for ${words.label}`;
  }
  if (before === lock.state) return null;
  // the line handed the record over: the field is editable now
  if (lock.state === 'owned' && before === 'waiting') return `It's yours: ${words.label}`;
  if (lock.state === 'waiting') return `${placeInLine(lock.position ?? 1)} for ${words.label}`;
  if (before === 'waiting') return lock.state === 'unlocked' ? `${words.label} is free` : null;
  if (lock.state === 'locked' && lock.holder && lock.lock && isDeep(lock.lock)) {
    const who = lock.holder.id === me.id ? 'You are' : `${lock.holder.name} is`;
    return `${who} restructuring the ${lowerWords(lock.lock.lockable.type)} of ${words.label}`;
  }
  if (lock.state === 'locked' && lock.holder) {
    return lock.holder.id === me.id ? `You are editing ${words.label} in another tab` : `${lock.holder.name} is editing ${words.label}`;
  }
  if (lock.state === 'lost') {
    return lock.lostTo
      ? `${lock.lostTo.name} took over ${words.noun}. Your text is kept.`
      : `Your lock on ${words.label} ended. Your text is kept.`;
  }
  if (lock.state === 'unlocked' && before === 'locked') return `${words.label} is free`;
  return null;
}
