/**
 * The form's state machine (src/fieldMachine.ts), without a browser or a
 * server: its transitions and what the view shows for each lock state and
 * draft (the draft itself is the kit's, tested in clients/).
 */
import { expect, test } from '@playwright/test';
import { InvalidError, LockHeldError, LockedError, StaleVersionError, type AnyRecord, type Lock, type User, type Waiter } from '@baton/client';
import { ordinal } from '../src/format';
import {
  asksBeforeDropping,
  canStart,
  changedFields,
  changeOf,
  formReducer,
  initialField,
  initialForm,
  lockAnnouncement,
  moveRefusal,
  placeInLine,
  refusal,
  textOf,
  textsOf,
  viewOf,
  type FieldState,
  type FormEvent,
  type FormState,
  type LockView,
} from '../src/fieldMachine';

const person = (id: number, name: string, admin = false): User => ({
  type: 'User',
  table: 'users',
  param: String(id),
  id,
  name,
  color: '#4363d8',
  admin,
});
const alice = person(1, 'Alice', true);
const bob = person(2, 'Bob');
const carol = person(3, 'Carol');

const card = (content: string, version: number): AnyRecord & { content: string } => ({
  type: 'Card',
  table: 'cards',
  param: '12',
  id: 12,
  caseId: 1,
  pageId: 1,
  position: 0,
  content,
  version,
  createdAt: '2025-01-01T00:00:00Z',
  updatedAt: '2025-01-01T00:00:00Z',
});

const lockOf = (user: User, token: string): Lock => ({
  type: 'Lock',
  table: 'locks',
  param: token,
  id: Number(token),
  token,
  lockable: { type: 'Card', table: 'cards', param: '12' },
  depth: '0',
  caseId: 1,
  user,
  sessionId: `tab-${user.id}`,
  createdAt: '2025-01-01T00:00:00Z',
  expiresAt: '2025-01-01T00:01:00Z',
  lastActivityAt: '2025-01-01T00:00:00Z',
});

const free: LockView = { state: 'unlocked', holder: null, lock: null, lostTo: null, lostReason: null, outrankedBy: null, busy: false };
const mine = (user: User): LockView => ({ ...free, state: 'owned', holder: user, lock: lockOf(user, '5') });
const theirs = (user: User, token = '6'): LockView => ({ ...free, state: 'locked', holder: user, lock: lockOf(user, token) });
const words = { label: 'Card 1', noun: 'this card' };
/** A card's form: one field, `content`. */
const d = (content: string) => ({ content });
const context = (me: User, value: string, editable = true) => ({ fields: ['content'], editable, me, role: 'editor' as const, value: d(value) });
const run = (...events: FormEvent[]): FormState => events.reduce(formReducer, initialForm);
/** A form with a draft of `record` (the kit's), its text `values`, and the form's own state. */
const drafted = (record: AnyRecord, values: Record<string, string>, form: FormState = initialForm): FieldState => ({ ...form, draft: values, base: record });

test('the lock opens the editor on the draft; a changed draft is dirty, and Escape asks before dropping it', () => {
  const v1 = card('The first card.', 1);
  const opened = drafted(v1, d(textOf(v1, 'content')));
  const view = viewOf(opened, mine(carol), context(carol, v1.content), words);
  expect(view).toMatchObject({ editing: true, dirty: false, shown: d('The first card.') });
  expect(asksBeforeDropping(view)).toBe(false);
  const typed = viewOf(drafted(v1, d('More.')), mine(carol), context(carol, v1.content), words);
  expect(typed).toMatchObject({ editing: true, dirty: true, shown: d('More.') });
  expect(asksBeforeDropping(typed)).toBe(true);
  // no draft: the record's text, nothing to edit
  expect(viewOf(initialField, mine(carol), context(carol, v1.content), words)).toMatchObject({ editing: false, shown: d('The first card.') });
  // closing forgets what the last save said
  const refused = run({ type: 'saving' }, { type: 'refused', text: 'no', current: v1, errors: { content: 'bad' } });
  expect(formReducer(refused, { type: 'closed' })).toMatchObject({ stale: null, errors: {} });
});

test('a lock taken over keeps the draft: banner, badge of the taker, the draft panel', () => {
  const v1 = card('The first card.', 1);
  const state = drafted(v1, d('Carol adds…'));
  const lost: LockView = { ...theirs(bob), state: 'lost', lostTo: bob, lostReason: 'overridden' };
  const view = viewOf(state, lost, context(carol, v1.content), words);
  expect(view).toMatchObject({
    editing: false,
    lostDraft: d('Carol adds…'),
    lostBanner: 'Bob took over this card.',
    badge: 'Bob is editing',
    canContinue: false,
    canEditAnyway: false,
    shown: d('The first card.'),
  });
  // nothing typed: nothing to keep, the banner alone
  const untouched = drafted(v1, d(v1.content));
  expect(viewOf(untouched, lost, context(carol, v1.content), words).lostDraft).toBeNull();
  // an expired lock says why
  expect(viewOf(state, { ...free, state: 'lost', lostReason: 'expired' }, context(carol, v1.content), words)).toMatchObject({
    lostBanner: 'Your lock on Card 1 ended (expired).',
    canContinue: true,
  });
  // a tab that may no longer write (kicked) keeps the text too, and its lock looks ended
  expect(viewOf(state, mine(carol), context(carol, v1.content, false), words)).toMatchObject({
    editing: false,
    lostDraft: d('Carol adds…'),
    look: 'ended',
  });
});

test('a stale save shows the current text; choosing the current text clears the choice', () => {
  const v2 = card('Changed by a script', 2);
  const stale = new StaleVersionError(412, { code: 'stale_version', message: 'stale', current: v2 });
  const refused = refusal(stale, words, stale.message);
  expect(refused).toEqual({ text: 'Not saved: Card 1 was changed by someone else. Choose which text to keep.', current: v2 });
  const state = run({ type: 'saving' }, { type: 'refused', ...refused });
  expect(state).toMatchObject({ saving: false, stale: v2, notice: { kind: 'error' } });
  expect(formReducer(state, { type: 'usedCurrent' })).toMatchObject({ stale: null, notice: null });
  const locked = new LockedError(423, { code: 'locked', message: 'locked', lock: lockOf(bob, '7') });
  expect(refusal(locked, words, locked.message).text).toMatch(/^Not saved: Bob is editing this card now/);
  expect(refusal(new Error('boom'), words, 'boom')).toEqual({ text: 'Not saved: boom' });
});

test('"Edit anyway" is offered unless the holder outranks the person', () => {
  const state = initialField;
  expect(viewOf(state, theirs(carol), context(bob, ''), words)).toMatchObject({ canEditAnyway: true, outranked: null, badge: 'Carol is editing' });
  // a site admin outranks every case role
  expect(viewOf(state, theirs(alice), context(bob, ''), words)).toMatchObject({ canEditAnyway: false, outranked: 'Alice' });
  // a refusal names who outranks, for that lock
  expect(viewOf(state, { ...theirs(carol), outrankedBy: carol }, context(bob, ''), words).outranked).toBe('Carol');
  // the person's own other tab
  expect(viewOf(state, theirs(bob), context(bob, ''), words).badge).toBe('You are editing this in another tab');
  expect(viewOf(state, free, context(bob, ''), words)).toMatchObject({ canEdit: true, canEditAnyway: false, badge: null });
  expect(viewOf(state, free, context(bob, '', false), words).canEdit).toBe(false);
});

test('when the lock may be taken, and what is announced', () => {
  expect(canStart('unlocked', true, false)).toBe(true);
  expect(canStart('locked', true, false)).toBe(true);
  expect(canStart('unlocked', true, true)).toBe(false);
  expect(canStart('unlocked', false, false)).toBe(false);
  expect(canStart('owned', true, false)).toBe(false);
  expect(canStart('lost', true, false)).toBe(false);
  expect(canStart('lost', true, false, true)).toBe(true);

  expect(lockAnnouncement('unlocked', { state: 'locked', holder: alice, lostTo: null }, words, bob)).toBe('Alice is editing Card 1');
  expect(lockAnnouncement('unlocked', { state: 'locked', holder: bob, lostTo: null }, words, bob)).toBe('You are editing Card 1 in another tab');
  expect(lockAnnouncement('owned', { state: 'lost', holder: bob, lostTo: bob }, words, carol)).toBe('Bob took over this card. Your text is kept.');
  expect(lockAnnouncement('owned', { state: 'lost', holder: null, lostTo: null }, words, carol)).toBe('Your lock on Card 1 ended. Your text is kept.');
  expect(lockAnnouncement('locked', { state: 'unlocked', holder: null, lostTo: null }, words, bob)).toBe('Card 1 is free');
  expect(lockAnnouncement('owned', { state: 'unlocked', holder: null, lostTo: null }, words, bob)).toBeNull();
  expect(lockAnnouncement('locked', { state: 'locked', holder: carol, lostTo: null }, words, bob)).toBeNull();
});

const waiterOf = (user: User, id: number): Waiter => ({
  type: 'Waiter',
  table: 'lock_waiters',
  param: String(id),
  id,
  lockable: { type: 'Card', table: 'cards', param: '12' },
  caseId: 1,
  user,
  sessionId: `tab-${user.id}`,
  position: id,
  createdAt: '2025-01-01T00:00:00Z',
  expiresAt: '2025-01-01T00:01:00Z',
});

test('waiting lines: ordinals, "Notify me / wait", the place in line, and who the holder sees waiting', () => {
  expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal)).toEqual([
    '1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '111th',
  ]);
  expect(placeInLine(1)).toBe('You are next');
  expect(placeInLine(2)).toBe('2nd in line');

  const state = initialField;
  // someone else holds it: wait, or edit anyway
  expect(viewOf(state, theirs(bob), context(carol, ''), words)).toMatchObject({ canWait: true, canEditAnyway: true, place: null });
  expect(viewOf(state, theirs(bob), context(carol, '', false), words).canWait).toBe(false);
  expect(viewOf(state, free, context(carol, ''), words).canWait).toBe(false);
  // in line: the holder's badge stays, "Edit anyway" is still there, the place is shown
  const waiting: LockView = { ...theirs(bob), state: 'waiting', position: 2, waiters: [waiterOf(carol, 1), waiterOf(alice, 2)] };
  expect(viewOf(state, waiting, context(alice, ''), words)).toMatchObject({
    canWait: false,
    canEditAnyway: true,
    canEdit: false,
    badge: 'Bob is editing',
    place: '2nd in line',
    line: [],
  });
  expect(canStart('waiting', true, false)).toBe(false);
  // the holder sees who waits, in line order
  const held: LockView = { ...mine(bob), waiters: [waiterOf(carol, 1), waiterOf(alice, 2)] };
  expect(viewOf(state, held, context(bob, ''), words).line.map((w) => w.user.name)).toEqual(['Carol', 'Alice']);
  // a place that ended without asking is said; a granted one is not
  expect(viewOf(state, { ...theirs(bob), lineEnded: 'expired' }, context(carol, ''), words).lineNote).toBe(
    'Your place in line for Card 1 ended (expired).',
  );

  expect(lockAnnouncement('locked', { state: 'waiting', holder: bob, lostTo: null, position: 1 }, words, carol)).toBe('You are next for Card 1');
  expect(lockAnnouncement('locked', { state: 'waiting', holder: bob, lostTo: null, position: 2 }, words, alice)).toBe('2nd in line for Card 1');
  expect(lockAnnouncement('waiting', { state: 'owned', holder: carol, lostTo: null }, words, carol)).toBe("It's yours: Card 1");
  expect(lockAnnouncement('waiting', { state: 'locked', holder: bob, lostTo: null }, words, carol)).toBeNull();
  expect(lockAnnouncement('waiting', { state: 'waiting', holder: carol, lostTo: null, position: 1 }, words, alice, 1)).toBeNull();
  // moving up the line is said too
  expect(lockAnnouncement('waiting', { state: 'waiting', holder: carol, lostTo: null, position: 1 }, words, alice, 2)).toBe('You are next for Card 1');
});

test('a deep lock: "Alice is restructuring this page" on the page and the cards inside, no takeover, no line', () => {
  const pageLock: Lock = { ...lockOf(alice, '9'), depth: 'infinity', lockable: { type: 'Page', table: 'pages', param: '3' } };
  const covered: LockView = { ...free, state: 'locked', holder: alice, lock: pageLock };
  const v1 = card('The first card.', 1);
  expect(viewOf(initialField, covered, context(bob, v1.content), words)).toMatchObject({
    badge: 'Alice is restructuring this page',
    canEditAnyway: false,
    canWait: false,
    canEdit: false,
  });
  expect(lockAnnouncement('unlocked', { state: 'locked', holder: alice, lostTo: null, position: null, lock: pageLock }, words, bob)).toBe(
    'Alice is restructuring the page of Card 1',
  );
  // the restructuring tab's own deep lock does not open the page title's editor
  const opened = drafted(v1, d(v1.content));
  expect(viewOf(opened, { ...free, state: 'owned', holder: alice, lock: pageLock }, context(alice, v1.content), words)).toMatchObject({
    editing: false,
    restructuring: true,
  });
  // a save refused inside it says so
  const refused = new LockedError(423, { code: 'locked', message: 'Page 3 is locked by Alice.', lock: pageLock });
  expect(refusal(refused, words, refused.message).text).toContain('Alice is restructuring this page now');
  expect(moveRefusal(refused, 'Card 1', refused.message)).toBe('Not moved: Alice is restructuring that page. Page 3 is locked by Alice.');
});

test('a lock taken to move the card is no edit: "You are moving this card"; a refused move names every holder', () => {
  const v1 = card('The first card.', 1);
  expect(viewOf(initialField, mine(bob), { ...context(bob, v1.content), moving: true }, words)).toMatchObject({
    editing: false,
    badge: 'You are moving this card',
  });
  const held = new LockHeldError(409, {
    code: 'lock_held',
    message: 'Card 12 is being edited by Carol.',
    lock: lockOf(carol, '7'),
    locks: [lockOf(carol, '7')],
  });
  expect(moveRefusal(held, 'Card 1', held.message)).toBe('Not moved: Carol is editing Card 1. Card 12 is being edited by Carol.');
});

test('a 422 names the field: its message is the notice of that field', () => {
  const invalid = new InvalidError('invalid', 422, 'dueOn: not a date', {
    code: 'invalid',
    message: 'dueOn: not a date',
    fields: [
      { field: 'title', message: 'title: too long' },
      { field: 'dueOn', message: 'dueOn: not a date' },
    ],
  });
  expect(refusal(invalid, words, invalid.message, 'dueOn').text).toBe('Not saved: dueOn: not a date');
  expect(refusal(invalid, words, invalid.message, 'title').text).toBe('Not saved: title: too long');
  // each field's message goes to that field of the form, and typing there clears it
  const refused = refusal(invalid, words, invalid.message);
  expect(refused.errors).toEqual({ title: 'title: too long', dueOn: 'dueOn: not a date' });
  const state = run({ type: 'saving' }, { type: 'refused', ...refused });
  expect(state.errors).toEqual({ title: 'title: too long', dueOn: 'dueOn: not a date' });
  expect(formReducer(state, { type: 'edited', field: 'dueOn' }).errors).toEqual({ title: 'title: too long' });
  expect(formReducer(state, { type: 'edited', field: 'other' })).toBe(state);
});

test('one form for the whole record: a save sends only the fields changed', () => {
  const book = { ...card('', 1), title: 'Preface', status: 'draft', pages: 3 };
  const draft = { title: 'Preface', status: 'review', pages: '4' };
  expect(changedFields(draft, book)).toEqual(['status', 'pages']);
  expect(changeOf(draft, book, (field, text) => (field === 'pages' ? Number(text) : text))).toEqual({ status: 'review', pages: 4 });
  expect(textsOf(book, ['title', 'pages'])).toEqual({ title: 'Preface', pages: '3' });
  // a lost lock keeps only what was changed
  const state = drafted(book, { ...textsOf(book, ['title', 'status']), status: 'done' });
  const lost: LockView = { ...theirs(bob), state: 'lost', lostTo: bob, lostReason: 'overridden' };
  expect(viewOf(state, lost, { ...context(carol, ''), fields: ['title', 'status'], value: textsOf(book, ['title', 'status']) }, words).lostDraft).toEqual({
    status: 'done',
  });
});
