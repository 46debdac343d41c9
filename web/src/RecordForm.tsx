import type { AnyRecord, DeclaredType, Lockable as LockableRecord } from '@baton/client';
import { Lockable, useBaton, useDraft, type LockableRenderProps } from '@baton/react';
import { useEffect, useId, useMemo, useReducer, useRef, type KeyboardEvent } from 'react';
import { useAnnounce } from './Announcer';
import { askToNotify, tellAway } from './attention';
import { Avatar } from './Avatar';
import { DraftPanel } from './DraftPanel';
import { FieldControl } from './FieldControl';
import {
  asksBeforeDropping,
  canStart,
  changeOf,
  formReducer,
  initialForm,
  lockAnnouncement,
  refusal,
  textsOf,
  viewOf,
  type Drafts,
  type FieldName,
  type FieldState,
} from './fieldMachine';
import { mayTakeOver, message } from './format';
import { fieldOrder, isTextOnly, lowerWords, valueOf } from './schemaText';
import { StaleChoice } from './StaleChoice';
import { fieldPlans, useTree, type FieldPlan } from './tree';

export interface RecordFormProps {
  type: DeclaredType;
  record: AnyRecord;
  /** What people call the record: its label ("The harbour"), else "Card 2". */
  name: string;
  /** Show the name as the form's heading (a section shows its own). */
  headed?: boolean;
  /** This tab holds the record's lock to move it (a drag, a move button), not to edit it. */
  moving?: boolean;
}

/**
 * A record edited as one form: one "Edit" takes the record's lock and opens
 * every field; "Save" sends one PATCH with the fields changed (If-Match and
 * Lock-Token, by the kit); "Cancel" drops the draft and releases the lock,
 * and so does Escape (asking first when the draft changed). Nothing else
 * ends an edit: focus leaving the form saves nothing, and the draft is the
 * kit's (by record), so the form can unmount (scrolled out of a long list)
 * and come back with it. Someone else's lock shows once, on the form: who
 * is editing, "Edit anyway", "Notify me / wait"; a lock taken over keeps
 * the unsaved changes. A record of one field (the casebook's card, a
 * page's title) is that field: a click into it starts editing there.
 */
export function RecordForm(props: RecordFormProps) {
  return <Lockable record={props.record}>{(lock) => <FormView {...props} lock={lock} />}</Lockable>;
}

/** The drafts of the fields a panel shows, as one text ("Title: …" per field when there are several). */
function draftText(draft: Drafts, plans: FieldPlan[]): string {
  const shown = plans.filter((p) => p.field in draft);
  if (plans.length === 1) return draft[plans[0]!.field] ?? '';
  return shown.map((p) => `${p.title}: ${draft[p.field] ?? ''}`).join('\n');
}

function FormView({ type, record, name, headed = false, moving = false, lock }: RecordFormProps & { lock: LockableRenderProps }) {
  const tree = useTree();
  const { editable, me, role } = tree;
  const baton = useBaton();
  const announce = useAnnounce();
  const [form, dispatch] = useReducer(formReducer, initialForm);
  const kept = useDraft(record);
  const plans = useMemo(() => fieldPlans(type, record, name), [type, record, name]);
  const fieldNames = useMemo(() => fieldOrder(type), [type]);
  const single = isTextOnly(type);
  // a record of one field is that field: a click into it edits it; in a form of several, a click is only a click
  const oneField = fieldNames.length === 1;
  const value = useMemo(() => textsOf(record, fieldNames), [record, fieldNames]);
  const inputs = useRef(new Map<FieldName, HTMLElement>());
  const focusOn = useRef<FieldName | null>(null);
  /** "Edit again with my text": the next lock of this tab moves the kept draft onto the record as it is now. */
  const carrying = useRef(false);
  const wrapperRef = useRef<HTMLDivElement>(null);
  const noticeId = useId();
  const baseId = useId();
  const thing = `this ${lowerWords(type.name)}`;
  const words = { label: name, noun: thing, thing };
  const takeover = mayTakeOver(role, type.lock.takeover);
  // sound: the draft's base is the record this form opened it on
  const state: FieldState = { ...form, draft: kept ? { ...kept.values } : null, base: kept ? (kept.base as LockableRecord) : null };
  const view = viewOf(state, lock, { fields: fieldNames, editable, me, role, value, moving, takeover, waitable: type.lock.wait }, words);
  const { draft, base } = state;
  const { stale, notice, errors } = form;

  const focusField = (field: FieldName | null) => {
    // the lock came back after the person had already moved into a field (typing there): leave the focus be
    const active = document.activeElement;
    if (active && [...inputs.current.values()].includes(active as HTMLElement)) return;
    const target = inputs.current.get(field ?? fieldNames[0] ?? '') ?? inputs.current.get(fieldNames[0] ?? '');
    target?.focus();
  };

  // tell assistive tech (and everyone) what happened to the lock
  const previous = useRef(lock.state);
  const previousPlace = useRef(lock.position);
  const { holder, lostTo, position, lock: current } = lock;
  useEffect(() => {
    const before = previous.current;
    const placeBefore = previousPlace.current;
    previous.current = lock.state;
    previousPlace.current = position;
    const text = lockAnnouncement(before, { state: lock.state, holder, lostTo, position, lock: current }, { label: name, noun: thing }, me, placeBefore);
    if (text) announce(text);
    if (before === 'waiting' && lock.state === 'owned') {
      // "Wait for it" tells you: in the page, in the title while the tab is hidden, by a notification where allowed
      dispatch({ type: 'notice', notice: { kind: 'info', text: `It's yours: ${name}. You can edit it now.` } });
      tellAway(`It's yours: ${name}`);
    }
    // the button pressed went away: keep the focus in the form (unless the person is busy elsewhere)
    const active = document.activeElement;
    const here = !active || active === document.body || wrapperRef.current?.contains(active);
    // in line: on "Leave the line"; handed over from the line: in the form, as asked for
    if (here && lock.state === 'waiting') wrapperRef.current?.querySelector<HTMLButtonElement>('[data-leave-line]')?.focus();
    if (here && before === 'waiting' && lock.state === 'owned') requestAnimationFrame(() => focusField(focusOn.current));
    // focusField reads refs only
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [lock.state, holder, lostTo, position, current, announce, name, thing, me]);

  // a lock of this tab (taken here, by "Edit anyway", handed over, or found again after a reload) opens the form
  // on a draft of the kit's; one kept from before (the form scrolled away, or the lock was lost) carries on
  // (not a lock taken to move the record, nor this tab's deep lock on it: those are no edit)
  const { restructuring } = view;
  useEffect(() => {
    if (lock.state !== 'owned' || moving || restructuring) return;
    if (!kept) baton.drafts.open(record, value);
    else if (carrying.current) baton.drafts.rebase(record, value);
    carrying.current = false;
  }, [lock.state, kept, value, record, moving, restructuring, baton]);

  // a move takes the lock of a form open without changes: the form closes
  useEffect(() => {
    if (moving && kept && kept.changed.length === 0 && lock.state === 'owned') baton.drafts.discard(record);
  }, [moving, kept, lock.state, baton, record]);

  // a refused lock action (held, outranked, network) is the form's notice
  useEffect(() => {
    if (lock.error) dispatch({ type: 'notice', notice: { kind: 'error', text: message(lock.error) } });
  }, [lock.error]);

  async function startEditing(field: FieldName | null = null, afterLoss = false): Promise<boolean> {
    if (!canStart(lock.state, editable, view.busy, afterLoss)) return false;
    focusOn.current = field;
    dispatch({ type: 'notice', notice: null });
    const took = await lock.startEditing();
    if (took) requestAnimationFrame(() => focusField(field));
    return took;
  }

  async function waitForIt(): Promise<void> {
    dispatch({ type: 'notice', notice: null });
    // "Notify me": the browser may tell the person when it is theirs, if they allow it
    askToNotify();
    await lock.waitForIt();
  }

  async function editAnyway(): Promise<void> {
    dispatch({ type: 'notice', notice: null });
    if (await lock.editAnyway()) requestAnimationFrame(() => focusField(null));
  }

  /** Ends editing: the draft is dropped and the lock released (or a lost one forgotten). */
  async function finish(): Promise<void> {
    baton.drafts.discard(record);
    dispatch({ type: 'closed' });
    await lock.stopEditing();
  }

  /** Escape: drops the draft and releases, asking first when the draft changed. */
  function dropAsking(): void {
    if (asksBeforeDropping(view) && !window.confirm(`Discard your changes to ${name}?`)) return;
    void finish();
  }

  const parse = (field: FieldName, text: string) => valueOf(text, type.fields[field], type.required.includes(field));

  /** Saves the changes of `changes` over the version `against`; false when refused (the reason is shown). */
  async function save(changes: Drafts, from: LockableRecord, against: LockableRecord): Promise<boolean> {
    dispatch({ type: 'saving' });
    try {
      await baton.save(against, changeOf(changes, from, parse));
      dispatch({ type: 'saved' });
      return true;
    } catch (e) {
      const firstChanged = Object.keys(changes).find((f) => changes[f] !== value[f]);
      dispatch({ type: 'refused', ...refusal(e, words, message(e), firstChanged) });
      return false;
    }
  }

  async function saveAndFinish(): Promise<void> {
    if (draft === null || !base) return;
    if (!view.dirty) return finish();
    if (await save(draft, base, base)) {
      announce(`${name} saved`);
      await finish();
    }
  }

  function onKeyDown(field: FieldName, multiline: boolean) {
    return (event: KeyboardEvent) => {
      if (event.key === 'Escape' && view.editing) {
        event.preventDefault();
        dropAsking();
      } else if (event.key === 'Enter' && !view.editing && lock.state !== 'lost') {
        event.preventDefault();
        void startEditing(field);
      } else if (event.key === 'Enter' && view.editing && !multiline) {
        event.preventDefault();
        void saveAndFinish();
      } else if (event.key === 's' && (event.ctrlKey || event.metaKey) && view.editing) {
        event.preventDefault();
        void saveAndFinish();
      }
    };
  }

  async function continueWithDraft(): Promise<void> {
    carrying.current = true;
    if (!(await startEditing(null, true))) carrying.current = false;
  }

  const control = (plan: FieldPlan) => {
    const id = `${baseId}-field-${plan.field}`;
    const error = errors[plan.field];
    const errorId = `${id}-error`;
    const hint = type.fields[plan.field]?.description;
    const hintId = `${id}-hint`;
    const describedBy = [error ? errorId : null, !single && hint ? hintId : null, notice && single ? noticeId : null].filter(Boolean).join(' ') || undefined;
    const required = type.required.includes(plan.field);
    const input = editable ? (
      <FieldControl
        control={plan.control}
        schema={type.fields[plan.field]}
        required={required}
        id={id}
        ariaLabel={plan.label}
        describedBy={describedBy}
        invalid={error !== undefined}
        value={view.shown[plan.field] ?? ''}
        editing={view.editing}
        onChange={(text) => {
          // the kit keeps the draft, and renews the lock's activity (at most once a minute): typing is activity
          baton.drafts.set(record, plan.field, text);
          dispatch({ type: 'edited', field: plan.field });
        }}
        onActivate={oneField ? () => void startEditing(plan.field) : undefined}
        onKeyDown={onKeyDown(plan.field, plan.control === 'textarea')}
        inputRef={(el) => {
          if (el) inputs.current.set(plan.field, el);
          else inputs.current.delete(plan.field);
        }}
      />
    ) : (
      <p className="field-text" data-testid="field-text" id={id}>
        {plan.control === 'uri' && value[plan.field] ? (
          <a href={value[plan.field]} rel="noreferrer noopener" target="_blank">
            {value[plan.field]}
          </a>
        ) : (
          value[plan.field]
        )}
      </p>
    );
    const errorLine = error ? (
      <p className="error field-error" id={errorId} data-testid="field-error">
        {error}
      </p>
    ) : null;
    if (single) {
      return (
        <div key={plan.field} className="form-field-single" data-field={plan.field}>
          {input}
          {errorLine}
        </div>
      );
    }
    return (
      <div key={plan.field} className="form-field" data-testid={plan.testId} data-field={plan.field}>
        <label className="form-label" htmlFor={id}>
          {plan.title}
          {required && view.editing ? (
            <span className="required" aria-hidden="true">
              {' '}
              *
            </span>
          ) : null}
        </label>
        {input}
        {!single && hint && view.editing ? (
          <span className="muted field-hint" id={hintId}>
            {hint}
          </span>
        ) : null}
        {errorLine}
      </div>
    );
  };

  return (
    <div
      ref={wrapperRef}
      className={`field record-form field-${view.look}${editable ? '' : ' field-readonly'}${single ? '' : ' record-form-many'}`}
      data-testid={`field-${type.name}-${record.param}`}
      data-field-of={`${record.type}/${record.param}`}
      data-lock-state={lock.state}
      data-editing={view.editing ? 'true' : undefined}
      style={lock.state === 'locked' && holder ? { borderColor: holder.color } : undefined}
    >
      <div className="field-head">
        {headed ? (
          <h3 className="record-title" data-testid="record-title">
            {name}
          </h3>
        ) : single ? (
          <span className="field-label" aria-hidden={editable}>
            {name}
          </span>
        ) : null}
        {view.badge !== null && holder ? (
          <span className="lock-badge" data-testid="lock-badge" style={{ borderColor: holder.color }}>
            <Avatar name={holder.name} color={holder.color} size="small" decorative />
            {view.badge}
          </span>
        ) : null}
        {view.canEdit ? (
          <button type="button" className="secondary" onClick={() => void startEditing()} disabled={view.busy} aria-label={`Edit ${name}`}>
            Edit
          </button>
        ) : null}
        {view.canEditAnyway ? (
          <button type="button" onClick={() => void editAnyway()} disabled={view.busy}>
            Edit anyway<span className="visually-hidden">{` (${name})`}</span>
          </button>
        ) : null}
        {view.canWait ? (
          <button type="button" className="secondary" onClick={() => void waitForIt()} disabled={view.busy} aria-label={`Notify me / wait for ${name}`}>
            Notify me / wait
          </button>
        ) : null}
        {view.place !== null ? (
          <>
            <span className="line-place" data-testid="line-place">
              {view.place}
            </span>
            <button type="button" className="secondary" data-leave-line onClick={() => void lock.leaveLine()} disabled={view.busy} aria-label={`Leave the line for ${name}`}>
              Leave the line
            </button>
          </>
        ) : null}
        {editable && view.outranked !== null ? (
          <span className="muted" data-testid="outranked">
            {view.outranked} outranks you: only someone with at least their role can take over.
          </span>
        ) : null}
        {view.editing ? (
          <>
            <button type="button" onClick={() => void saveAndFinish()} disabled={view.busy} aria-label={`Save ${name}`}>
              Save
            </button>
            <button type="button" className="secondary" onClick={() => void finish()} disabled={view.busy} aria-label={`Cancel editing ${name}`}>
              Cancel
            </button>
            <span className="muted">{view.dirty ? 'Unsaved changes' : 'Editing'}</span>
          </>
        ) : null}
      </div>

      {view.line.length > 0 ? (
        <ul className="waiters" aria-label={`Waiting for ${name}`} data-testid="waiters">
          {view.line.map((waiter) => (
            <li key={waiter.param} data-testid="waiter">
              <Avatar name={waiter.user.name} color={waiter.user.color} size="small" decorative />
              {waiter.user.id === me.id ? 'You are waiting in another tab' : `${waiter.user.name} is waiting`}
            </li>
          ))}
        </ul>
      ) : null}

      {view.lineNote !== null ? (
        <p className="muted" data-testid="line-note">
          {view.lineNote}
        </p>
      ) : null}

      <div className={single ? 'form-fields-single' : 'form-fields'}>{plans.map(control)}</div>

      {view.lostBanner !== null ? (
        <div className="banner banner-warning" role="alert" data-testid="takeover-banner">
          {view.lostBanner}
          {view.lostDraft === null ? (
            <button type="button" className="secondary" onClick={() => void finish()}>
              OK
            </button>
          ) : null}
        </div>
      ) : null}

      {view.lostDraft !== null && base ? (
        <DraftPanel
          label={name}
          text={draftText(view.lostDraft, plans)}
          busy={view.busy}
          editable={editable}
          canContinue={view.canContinue}
          onSave={() => void save(view.lostDraft ?? {}, base, base)}
          onContinue={() => void continueWithDraft()}
          onDiscard={() => void finish()}
        />
      ) : null}

      {stale && draft !== null && base ? (
        <StaleChoice
          label={name}
          current={draftText(textsOf(stale, fieldNames), plans)}
          mine={draftText(draft, plans)}
          version={stale.version}
          busy={view.busy}
          onKeepMine={() =>
            void (async () => {
              if (await save(draft, base, stale)) await finish();
            })()
          }
          onUseCurrent={() => {
            baton.drafts.restart(stale, textsOf(stale, fieldNames));
            dispatch({ type: 'usedCurrent' });
          }}
        />
      ) : null}

      {notice ? (
        <p className={notice.kind === 'error' ? 'error' : 'muted'} id={noticeId} role={notice.kind === 'error' ? 'alert' : undefined} data-testid="field-notice">
          {notice.text}
        </p>
      ) : null}
    </div>
  );
}
