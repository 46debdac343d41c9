import type { FieldSchema, Lockable as LockableRecord, Role, User } from '@baton/client';
import { Lockable, useBaton, type LockableRenderProps } from '@baton/react';
import { useContext, useEffect, useEffectEvent, useId, useReducer, useRef, type FocusEvent, type KeyboardEvent } from 'react';
import { useAnnounce } from './Announcer';
import { Avatar } from './Avatar';
import { DraftPanel } from './DraftPanel';
import {
  canStart,
  changeOf,
  fieldReducer,
  initialField,
  lockAnnouncement,
  refusal,
  textOf,
  viewOf,
  type FieldName,
} from './fieldMachine';
import { message } from './format';
import { FieldTurnContext } from './fieldTurn';
import { valueOf, type Control } from './schemaText';
import { StaleChoice } from './StaleChoice';

export type EditableRecord = LockableRecord;

export interface LockableFieldProps<R extends EditableRecord> {
  record: R;
  /** The attribute edited here: any declared field of the record's type. */
  field: FieldName;
  /** Accessible name of the field, e.g. "Card 2". */
  label: string;
  /** What people call the field in notices: "this card", "this page title". */
  noun: string;
  /** What people call the record: "this card" (default: `noun`). */
  thing?: string;
  multiline?: boolean;
  /** The control the field's JSON Schema calls for (default: a text area when `multiline`, else an input). */
  control?: Control;
  /** The field's JSON Schema: a select's options, a number's bounds, what a save sends. */
  schema?: FieldSchema;
  /** A create must give the field (then an empty value is not null). */
  required?: boolean;
  /** The field's test id (default `field-<Type>-<param>`). */
  testId?: string;
  /** The type's lock policy lets the person "Edit anyway" (default true). */
  takeover?: boolean;
  /** The type's lock policy has waiting lines (default true). */
  waitable?: boolean;
  /** The person's role lets them edit, and the tab is live. */
  editable: boolean;
  me: User;
  /** The person's role on the case (`site admin` for site admins). */
  role: Role | null;
  /** This tab holds the record's lock to move it (a drag, a move button), not to edit its text. */
  moving?: boolean;
}

/**
 * One lockable text field: editing takes the record's lock, saving sends
 * If-Match and Lock-Token (the kit does), leaving the field or the screen
 * releases it. Someone else's lock makes it read-only with a badge and
 * "Edit anyway"; a lock taken over keeps the person's unsaved text. The
 * lock flow is the kit's <Lockable>; what the field shows comes from
 * fieldMachine.ts.
 */
export function LockableField<R extends EditableRecord>(props: LockableFieldProps<R>) {
  return (
    <Lockable record={props.record} releaseOnUnmount>
      {(lock) => <FieldView {...props} lock={lock} />}
    </Lockable>
  );
}

function FieldView<R extends EditableRecord>({
  record,
  field,
  label,
  noun,
  thing,
  multiline = false,
  control = multiline ? 'textarea' : 'input',
  schema,
  required = false,
  testId,
  takeover = true,
  waitable = true,
  editable,
  me,
  role,
  moving = false,
  lock,
}: LockableFieldProps<R> & { lock: LockableRenderProps }) {
  const turn = useContext(FieldTurnContext);
  const baton = useBaton();
  const announce = useAnnounce();
  const [state, dispatch] = useReducer(fieldReducer, initialField);
  const inputRef = useRef<HTMLTextAreaElement & HTMLInputElement>(null);
  const wrapperRef = useRef<HTMLDivElement>(null);
  const noticeId = useId();
  const words = { label, noun, thing: thing ?? noun };
  const value = textOf(record, field);
  const otherTurn = turn !== null && turn.active !== null && turn.active !== field;
  const view = viewOf(state, lock, { field, editable, me, role, value, moving, takeover, waitable, turnElsewhere: otherTurn }, words);
  const { draft, base, stale, notice } = state;

  // tell assistive tech (and everyone) what happened to the lock
  const previous = useRef(lock.state);
  const previousPlace = useRef(lock.position);
  const { holder, lostTo, position, lock: current } = lock;
  useEffect(() => {
    const before = previous.current;
    const placeBefore = previousPlace.current;
    previous.current = lock.state;
    previousPlace.current = position;
    const text = lockAnnouncement(before, { state: lock.state, holder, lostTo, position, lock: current }, { label, noun }, me, placeBefore);
    if (text) announce(text);
    // the button pressed went away: keep the focus in the field (unless the person is busy elsewhere)
    const active = document.activeElement;
    const here = !active || active === document.body || wrapperRef.current?.contains(active);
    // in line: on "Leave the line"; handed over from the line: in the text, as asked for
    if (here && lock.state === 'waiting') wrapperRef.current?.querySelector<HTMLButtonElement>('[data-leave-line]')?.focus();
    if (here && before === 'waiting' && lock.state === 'mine') inputRef.current?.focus();
  }, [lock.state, holder, lostTo, position, current, announce, label, noun, me]);

  // a lock of this tab (taken here, by "Edit anyway", or found again after a reload) opens the editor
  // (not a lock taken to move the record, nor this tab's deep lock on it: those are no edit of the text)
  const { restructuring } = view;
  useEffect(() => {
    // a record of several fields: only the field whose turn it is opens
    if (lock.state === 'mine' && draft === null && !moving && !restructuring && (!turn || turn.claim(field))) {
      dispatch({ type: 'opened', record, text: value });
    }
  }, [lock.state, draft, value, record, moving, restructuring, turn, field]);

  // another field of the record took the turn: this one saves what was typed and closes, the lock stays
  // (an effect event: it reads the draft as it is when the turn moves, and runs only then)
  const yieldTurn = useEffectEvent(() => {
    if (draft === null || !base) return;
    if (draft === textOf(base, field)) dispatch({ type: 'closed' });
    else void save(draft, base).then((saved) => saved && dispatch({ type: 'closed' }));
  });
  useEffect(() => {
    if (otherTurn) yieldTurn();
  }, [otherTurn]);

  // a move takes the lock of a field open without changes: the editor closes
  const unsaved = draft !== null && base !== null && draft !== textOf(base, field);
  useEffect(() => {
    if (moving && draft !== null && !unsaved) dispatch({ type: 'closed' });
  }, [moving, draft, unsaved]);

  // a refused lock action (held, outranked, network) is the field's notice
  useEffect(() => {
    if (lock.error) dispatch({ type: 'notice', notice: { kind: 'error', text: message(lock.error) } });
  }, [lock.error]);

  async function startEditing(afterLoss = false): Promise<boolean> {
    // the record's lock is this tab's for another of its fields: the turn moves here
    if (turn && lock.state === 'mine' && editable && !view.busy && draft === null && !restructuring && !moving) {
      turn.take(field);
      inputRef.current?.focus();
      return true;
    }
    if (!canStart(lock.state, editable, view.busy, afterLoss)) return false;
    dispatch({ type: 'notice', notice: null });
    turn?.take(field);
    const took = await lock.startEditing();
    if (took) inputRef.current?.focus();
    return took;
  }

  async function waitForIt(): Promise<void> {
    dispatch({ type: 'notice', notice: null });
    turn?.take(field);
    await lock.waitForIt();
  }

  async function editAnyway(): Promise<void> {
    dispatch({ type: 'notice', notice: null });
    turn?.take(field);
    if (await lock.editAnyway()) inputRef.current?.focus();
  }

  /** Ends editing: the editor closes and the lock is released (or a lost one forgotten). */
  async function finish(): Promise<void> {
    dispatch({ type: 'closed' });
    turn?.release(field);
    await lock.stopEditing();
  }

  /** Saves `text` over the version `against`; false when refused (the reason is shown). */
  async function save(text: string, against: LockableRecord): Promise<boolean> {
    dispatch({ type: 'saving' });
    try {
      await baton.save(against, changeOf(field, text, (t) => valueOf(t, schema, required)));
      dispatch({ type: 'saved' });
      return true;
    } catch (e) {
      dispatch({ type: 'refused', ...refusal(e, words, message(e), field) });
      return false;
    }
  }

  async function saveAndFinish(): Promise<void> {
    if (draft === null || !base) return;
    if (!view.dirty) return finish();
    // another field of the record saved under the same lock meanwhile: that newer version is this tab's own
    const own = turn !== null && lock.state === 'mine' && 'version' in record && record.version > base.version;
    if (await save(draft, own ? record : base)) {
      announce(`${label} saved`);
      await finish();
    }
  }

  function onBlur(event: FocusEvent<HTMLDivElement>): void {
    const next = event.relatedTarget;
    if (next instanceof Node && wrapperRef.current?.contains(next)) return;
    // to another field of the same record: that field takes the turn (and this one saves then)
    const key = `${record.type}/${record.param}`;
    if (turn && next instanceof Element && next.closest('[data-field-of]')?.getAttribute('data-field-of') === key) return;
    // leaving the field releases the lock (saving first what was typed)
    if (view.editing && !view.busy && !stale) void saveAndFinish();
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.key === 'Escape' && view.editing) {
      event.preventDefault();
      void finish();
    } else if (event.key === 'Enter' && !view.editing && lock.state !== 'lost') {
      event.preventDefault();
      void startEditing();
    } else if (event.key === 'Enter' && view.editing && control !== 'textarea') {
      event.preventDefault();
      void saveAndFinish();
    } else if (event.key === 's' && (event.ctrlKey || event.metaKey) && view.editing) {
      event.preventDefault();
      void saveAndFinish();
    }
  }

  async function continueWithDraft(): Promise<void> {
    dispatch({ type: 'carried' });
    if (!(await startEditing(true))) dispatch({ type: 'carryFailed' });
  }

  const inputProps = {
    ref: inputRef,
    value: view.shown,
    readOnly: !view.editing,
    'aria-label': label,
    'aria-describedby': notice ? noticeId : undefined,
    'data-testid': 'field-input',
    onChange: (e: { target: { value: string } }) => {
      if (!view.editing) return;
      dispatch({ type: 'typed', text: e.target.value });
      // typing is activity: a long draft keeps its lock (renewed at most once a minute)
      baton.locks.touch(record);
    },
    onClick: () => void startEditing(),
    onKeyDown,
  };

  return (
    <div
      ref={wrapperRef}
      className={`field field-${view.look}${editable ? '' : ' field-readonly'}`}
      data-testid={testId ?? `field-${record.type}-${record.param}`}
      data-field-of={`${record.type}/${record.param}`}
      data-field={field}
      data-lock-state={lock.state}
      onBlur={onBlur}
      style={lock.state === 'theirs' && holder ? { borderColor: holder.color } : undefined}
    >
      <div className="field-head">
        <span className="field-label" aria-hidden={editable}>
          {label}
        </span>
        {view.badge !== null && holder ? (
          <span className="lock-badge" data-testid="lock-badge" style={{ borderColor: holder.color }}>
            <Avatar name={holder.name} color={holder.color} size="small" decorative />
            {view.badge}
          </span>
        ) : null}
        {view.canEdit ? (
          <button type="button" className="secondary" onClick={() => void startEditing()} disabled={view.busy} aria-label={`Edit ${label}`}>
            Edit
          </button>
        ) : null}
        {view.canEditAnyway ? (
          <button type="button" onClick={() => void editAnyway()} disabled={view.busy} aria-label={`Edit ${label} anyway`}>
            Edit anyway
          </button>
        ) : null}
        {view.canWait ? (
          <button type="button" className="secondary" onClick={() => void waitForIt()} disabled={view.busy} aria-label={`Notify me / wait for ${label}`}>
            Notify me / wait
          </button>
        ) : null}
        {view.place !== null ? (
          <>
            <span className="line-place" data-testid="line-place">
              {view.place}
            </span>
            <button
              type="button"
              className="secondary"
              data-leave-line
              onClick={() => void lock.leaveLine()}
              disabled={view.busy}
              aria-label={`Leave the line for ${label}`}
            >
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
            <button type="button" onClick={() => void saveAndFinish()} disabled={view.busy}>
              Save
            </button>
            <button type="button" className="secondary" onClick={() => void finish()} disabled={view.busy}>
              Cancel
            </button>
            <span className="muted">{view.dirty ? 'Unsaved changes' : 'Editing'}</span>
          </>
        ) : null}
      </div>

      {view.line.length > 0 ? (
        <ul className="waiters" aria-label={`Waiting for ${label}`} data-testid="waiters">
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

      {editable ? (
        <FieldControl control={control} schema={schema} required={required} inputProps={inputProps} editing={view.editing} shown={view.shown} />
      ) : (
        <p className="field-text" data-testid="field-text">
          {control === 'uri' && value ? (
            <a href={value} rel="noreferrer noopener" target="_blank">
              {value}
            </a>
          ) : (
            value
          )}
        </p>
      )}

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
          label={label}
          text={view.lostDraft}
          busy={view.busy}
          editable={editable}
          canContinue={view.canContinue}
          onSave={() => void save(view.lostDraft ?? '', base)}
          onContinue={() => void continueWithDraft()}
          onDiscard={() => void finish()}
        />
      ) : null}

      {stale && draft !== null ? (
        <StaleChoice
          label={label}
          current={textOf(stale, field)}
          mine={draft}
          version={stale.version}
          busy={view.busy}
          onKeepMine={() =>
            void (async () => {
              if (await save(draft, stale)) await finish();
            })()
          }
          onUseCurrent={() => dispatch({ type: 'usedCurrent', text: textOf(stale, field) })}
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

type InputProps = {
  ref: React.RefObject<HTMLTextAreaElement & HTMLInputElement | null>;
  value: string;
  readOnly: boolean;
  'aria-label': string;
  'aria-describedby': string | undefined;
  'data-testid': string;
  onChange: (e: { target: { value: string } }) => void;
  onClick: () => void;
  onKeyDown: (event: KeyboardEvent) => void;
};

/** The control a field's JSON Schema calls for, read-only until the person edits. */
function FieldControl({
  control,
  schema,
  required,
  inputProps,
  editing,
  shown,
}: {
  control: Control;
  schema: FieldSchema | undefined;
  required: boolean;
  inputProps: InputProps;
  editing: boolean;
  shown: string;
}) {
  const { ref, ...rest } = inputProps;
  switch (control) {
    case 'textarea':
      return <textarea rows={2} {...inputProps} />;
    case 'select':
      return (
        <select
          ref={ref as React.RefObject<HTMLSelectElement | null>}
          {...rest}
          // a select cannot be read-only: until the lock is taken, a choice only takes it
          aria-readonly={!editing}
          onMouseDown={(e) => {
            if (!editing) {
              e.preventDefault();
              rest.onClick();
            }
          }}
        >
          {required || shown !== '' ? null : <option value="">—</option>}
          {(schema?.enum ?? []).map((v) => (
            <option key={String(v)} value={String(v)}>
              {String(v)}
            </option>
          ))}
        </select>
      );
    case 'checkbox':
      return (
        <input
          type="checkbox"
          ref={ref}
          aria-label={rest['aria-label']}
          aria-describedby={rest['aria-describedby']}
          data-testid={rest['data-testid']}
          checked={shown === 'true'}
          readOnly={rest.readOnly}
          onClick={(e) => {
            if (!editing) {
              e.preventDefault();
              rest.onClick();
            }
          }}
          onChange={(e) => rest.onChange({ target: { value: String(e.target.checked) } })}
          onKeyDown={rest.onKeyDown}
        />
      );
    case 'number':
      return <input type="number" min={schema?.minimum} max={schema?.maximum} step={schema?.type === 'integer' ? 1 : 'any'} {...inputProps} />;
    case 'date':
      return <input type="date" {...inputProps} />;
    case 'uri':
      return (
        <span className="uri-field">
          <input type="url" {...inputProps} />
          {shown ? (
            <a href={shown} rel="noreferrer noopener" target="_blank" data-testid="field-link">
              Open
            </a>
          ) : null}
        </span>
      );
    case 'input':
      return <input type="text" {...inputProps} />;
  }
}
