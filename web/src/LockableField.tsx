import {
  LockedError,
  LockLostError,
  OutrankedError,
  StaleVersionError,
  type Card,
  type Edgenote,
  type Page,
  type User,
} from '@baton/client';
import { useBaton, useLock } from '@baton/react';
import { useEffect, useId, useRef, useState, type FocusEvent, type KeyboardEvent } from 'react';
import { useAnnounce } from './Announcer';
import { Avatar } from './Avatar';
import { DraftPanel } from './DraftPanel';
import { message } from './format';
import { StaleChoice } from './StaleChoice';

export type EditableRecord = Card | Page | Edgenote;

export interface LockableFieldProps<R extends EditableRecord> {
  record: R;
  /** The attribute edited here: `content`, `title`, `caption`. */
  field: keyof R & string;
  /** Accessible name of the field, e.g. "Card 2". */
  label: string;
  /** What people call the record in notices: "this card", "this page title". */
  noun: string;
  multiline?: boolean;
  /** The person's role lets them edit, and the tab is live. */
  editable: boolean;
  me: User;
  /** The person's role on the case (`site admin` for site admins). */
  role: string | null;
}

type Notice = { kind: 'error' | 'info'; text: string } | null;

/**
 * One lockable text field: editing takes the record's lock, saving sends
 * If-Match and Lock-Token (the kit does), leaving the field releases it.
 * Someone else's lock makes it read-only with a badge and "Edit anyway"; a
 * lock taken over keeps the person's unsaved text.
 */
export function LockableField<R extends EditableRecord>({
  record,
  field,
  label,
  noun,
  multiline = false,
  editable,
  me,
  role,
}: LockableFieldProps<R>) {
  const baton = useBaton();
  const lock = useLock(record);
  const announce = useAnnounce();
  const value = String(record[field] ?? '');
  const [draft, setDraft] = useState<string | null>(null);
  const [base, setBase] = useState<R | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [stale, setStale] = useState<R | null>(null);
  const [outrankedBy, setOutrankedBy] = useState<{ token: string; name: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLTextAreaElement & HTMLInputElement>(null);
  const wrapperRef = useRef<HTMLDivElement>(null);
  const noticeId = useId();

  const { state, holder, lostTo } = lock;
  const heldByMeElsewhere = state === 'theirs' && holder?.id === me.id;
  // a site admin outranks every case role (managers see the holder's `admin` flag; editors learn it from a refusal)
  const outranked =
    state === 'theirs' && lock.lock
      ? outrankedBy?.token === lock.lock.token
        ? outrankedBy.name
        : holder?.admin === true && role !== 'site admin' && holder.id !== me.id
          ? holder.name
          : null
      : null;

  // tell assistive tech (and everyone) what happened to the lock
  const previous = useRef(state);
  useEffect(() => {
    const before = previous.current;
    previous.current = state;
    if (before === state) return;
    if (state === 'theirs' && holder) {
      announce(holder.id === me.id ? `You are editing ${label} in another tab` : `${holder.name} is editing ${label}`);
    } else if (state === 'lost') {
      announce(
        lostTo ? `${lostTo.name} took over ${noun}. Your text is kept.` : `Your lock on ${label} ended. Your text is kept.`,
      );
    } else if (state === 'free' && before === 'theirs') {
      announce(`${label} is free`);
    }
  }, [state, holder, lostTo, announce, label, noun, me.id]);

  // a lock of this tab (taken here, by "Edit anyway", or found again after a reload) opens the editor
  useEffect(() => {
    if (state === 'mine' && draft === null) {
      setDraft(value);
      setBase(record);
    }
  }, [state, draft, value, record]);

  // leaving the page (another screen of the app) releases the lock too
  const held = useRef(false);
  held.current = state === 'mine';
  const locks = baton.locks;
  const { type, param } = record;
  useEffect(
    () => () => {
      if (held.current) void locks.release({ type, param }).catch(() => {});
    },
    [locks, type, param],
  );

  // a stopped tab (kicked, signed out, case deleted) edits nothing, even if it still thinks it holds the lock
  const editing = editable && state === 'mine' && draft !== null;
  const dirty = editing && draft !== String(base?.[field] ?? '');

  async function startEditing(afterLoss = false): Promise<void> {
    if (!editable || state === 'mine' || (state === 'lost' && !afterLoss) || busy) return;
    setBusy(true);
    setNotice(null);
    try {
      await lock.acquire();
      inputRef.current?.focus();
    } catch (e) {
      setNotice({ kind: 'error', text: message(e) });
    } finally {
      setBusy(false);
    }
  }

  async function editAnyway(): Promise<void> {
    setBusy(true);
    setNotice(null);
    try {
      await lock.editAnyway();
      setOutrankedBy(null);
      inputRef.current?.focus();
    } catch (e) {
      if (e instanceof OutrankedError) setOutrankedBy({ token: e.lock.token, name: e.lock.user.name });
      setNotice({ kind: 'error', text: message(e) });
    } finally {
      setBusy(false);
    }
  }

  /** Ends editing: the lock is released and the editor closes. */
  async function finish(): Promise<void> {
    setDraft(null);
    setBase(null);
    setStale(null);
    try {
      await lock.release();
    } catch (e) {
      setNotice({ kind: 'error', text: message(e) });
    }
  }

  /** Saves `text` over the version `against`; false when refused (the reason is shown). */
  async function save(text: string, against: R): Promise<boolean> {
    setBusy(true);
    setNotice(null);
    try {
      await baton.save(against, { [field]: text });
      return true;
    } catch (e) {
      if (e instanceof StaleVersionError) {
        setStale(e.current as R);
        setNotice({ kind: 'error', text: `Not saved: ${label} was changed by someone else. Choose which text to keep.` });
      } else if (e instanceof LockedError) {
        setNotice({
          kind: 'error',
          text: `Not saved: ${e.lock.user.name} is editing ${noun} now. Your text is kept below; copy it and try again when they are done.`,
        });
      } else if (e instanceof LockLostError) {
        setNotice({
          kind: 'error',
          text: `Not saved: your lock on ${label} was taken over and the text has changed since. Your text is kept below.`,
        });
      } else {
        setNotice({ kind: 'error', text: `Not saved: ${message(e)}` });
      }
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function saveAndFinish(): Promise<void> {
    if (draft === null || !base) return;
    if (!dirty) return finish();
    if (await save(draft, base)) {
      announce(`${label} saved`);
      await finish();
    }
  }

  function onBlur(event: FocusEvent<HTMLDivElement>): void {
    const next = event.relatedTarget as Node | null;
    if (next && wrapperRef.current?.contains(next)) return;
    // leaving the field releases the lock (saving first what was typed)
    if (editing && !busy && !stale) void saveAndFinish();
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.key === 'Escape' && editing) {
      event.preventDefault();
      void finish();
    } else if (event.key === 'Enter' && !editing && state !== 'lost') {
      event.preventDefault();
      void startEditing();
    } else if (event.key === 'Enter' && editing && !multiline) {
      event.preventDefault();
      void saveAndFinish();
    } else if (event.key === 's' && (event.ctrlKey || event.metaKey) && editing) {
      event.preventDefault();
      void saveAndFinish();
    }
  }

  const lostDraft =
    (state === 'lost' || !editable) && draft !== null && draft !== String(base?.[field] ?? '') ? draft : null;
  const shown = editing ? draft : value;
  const readOnly = !editing;
  const inputProps = {
    ref: inputRef,
    value: shown ?? '',
    readOnly,
    'aria-label': label,
    'aria-describedby': notice ? noticeId : undefined,
    'data-testid': 'field-input',
    onChange: (e: { target: { value: string } }) => editing && setDraft(e.target.value),
    onClick: () => void startEditing(),
    onKeyDown,
  };

  return (
    <div
      ref={wrapperRef}
      className={`field field-${editable || state !== 'mine' ? state : 'ended'}${editable ? '' : ' field-readonly'}`}
      data-testid={`field-${record.type}-${record.param}`}
      data-lock-state={state}
      onBlur={onBlur}
      style={state === 'theirs' && holder ? { borderColor: holder.color } : undefined}
    >
      <div className="field-head">
        <span className="field-label" aria-hidden={editable}>
          {label}
        </span>
        {(state === 'theirs' || state === 'lost') && holder && lock.lock ? (
          <span className="lock-badge" data-testid="lock-badge" style={{ borderColor: holder.color }}>
            <Avatar name={holder.name} color={holder.color} size="small" decorative />
            {heldByMeElsewhere ? 'You are editing this in another tab' : `${holder.name} is editing`}
          </span>
        ) : null}
        {editable && state === 'free' ? (
          <button type="button" className="secondary" onClick={() => void startEditing()} disabled={busy} aria-label={`Edit ${label}`}>
            Edit
          </button>
        ) : null}
        {editable && state === 'theirs' && lock.lock && outranked === null ? (
          <button type="button" onClick={() => void editAnyway()} disabled={busy} aria-label={`Edit ${label} anyway`}>
            Edit anyway
          </button>
        ) : null}
        {editable && outranked !== null ? (
          <span className="muted" data-testid="outranked">
            {outranked} outranks you: only someone with at least their role can take over.
          </span>
        ) : null}
        {editing ? (
          <>
            <button type="button" onClick={() => void saveAndFinish()} disabled={busy}>
              Save
            </button>
            <button type="button" className="secondary" onClick={() => void finish()} disabled={busy}>
              Cancel
            </button>
            <span className="muted">{dirty ? 'Unsaved changes' : 'Editing'}</span>
          </>
        ) : null}
      </div>

      {editable ? (
        multiline ? (
          <textarea rows={2} {...inputProps} />
        ) : (
          <input type="text" {...inputProps} />
        )
      ) : (
        <p className="field-text" data-testid="field-text">
          {value}
        </p>
      )}

      {state === 'lost' ? (
        <div className="banner banner-warning" role="alert" data-testid="takeover-banner">
          {lostTo ? `${lostTo.name} took over ${noun}.` : `Your lock on ${label} ended (${lock.lostReason ?? 'expired'}).`}
          {lostDraft === null ? (
            <button type="button" className="secondary" onClick={() => void finish()}>
              OK
            </button>
          ) : null}
        </div>
      ) : null}

      {lostDraft !== null && base ? (
        <DraftPanel
          label={label}
          text={lostDraft}
          busy={busy}
          editable={editable}
          canContinue={editable && lock.lock === null}
          onSave={() => void save(lostDraft, base)}
          onContinue={() =>
            void (async () => {
              const mine = lostDraft;
              setDraft(null);
              await startEditing(true);
              setDraft(mine);
            })()
          }
          onDiscard={() => void finish()}
        />
      ) : null}

      {stale && draft !== null ? (
        <StaleChoice
          label={label}
          current={String(stale[field] ?? '')}
          mine={draft}
          version={stale.version}
          busy={busy}
          onKeepMine={() =>
            void (async () => {
              if (await save(draft, stale)) {
                setStale(null);
                await finish();
              }
            })()
          }
          onUseCurrent={() => {
            setDraft(String(stale[field] ?? ''));
            setBase(stale);
            setStale(null);
            setNotice(null);
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
