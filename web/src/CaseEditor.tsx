import { KickedError, NotFoundError, ForbiddenError, UnauthorizedError, type DeclaredType, type LiveState, type User } from '@baton/client';
import { useBaton, useLiveCase, useLiveSelector } from '@baton/react';
import { memo, useEffect, useMemo, useRef } from 'react';
import { AddRecord } from './AddRecord';
import { AvatarStack } from './AvatarStack';
import { canEdit, isManager } from './format';
import { RecordItem } from './RecordItem';
import { RecordSection } from './RecordSection';
import { href } from './router';
import { kebab, lowerWords, words } from './schemaText';
import { VirtualList } from './VirtualList';
import { DragContext, TreeContext, useChildren, useKeepDrafted, type DragSession, type Tree } from './tree';

function stoppedText(error: Error | null): string {
  if (error instanceof KickedError) {
    if (error.reason === 'access_removed') return 'You no longer have access to this case.';
    if (error.reason === 'signed_out') return 'You were signed out.';
    return 'An administrator closed this tab. Your locks were released; reload the page to open the case again.';
  }
  if (error instanceof NotFoundError) return 'This case no longer exists.';
  if (error instanceof ForbiddenError) return 'You no longer have access to this case.';
  if (error instanceof UnauthorizedError) return 'Your sign-in has ended. Please sign in again.';
  return error ? `This case stopped updating: ${error.message}` : 'This case stopped updating.';
}

interface Head {
  current: LiveState['case'];
  role: LiveState['role'];
  schema: LiveState['schema'];
  status: LiveState['status'];
  error: LiveState['error'];
}
const headOf = (s: LiveState): Head => ({ current: s.case, role: s.role, schema: s.schema, status: s.status, error: s.error });
const sameHead = (a: Head, b: Head): boolean =>
  a.current === b.current && a.role === b.role && a.schema === b.schema && a.status === b.status && a.error === b.error;
const presenceOf = (s: LiveState) => s.onlineUsers;

/**
 * A case with the records of whatever schema is in force, live, with locks
 * and presence: each type under the case as a section, children under their
 * parent. The editor re-renders for the case itself and presence; each
 * record selects its own data, so one frame re-renders what it changed.
 */
export function CaseEditor({ slug, me }: { slug: string; me: User }) {
  const live = useLiveCase(slug);
  useLeaving(live);
  const { current, role, schema, status, error } = useLiveSelector(live, headOf, sameHead);
  const onlineUsers = useLiveSelector(live, presenceOf);
  const stopped = status === 'stopped';
  const editable = canEdit(role) && !stopped;
  const dragging = useRef<DragSession | null>(null);
  const tree = useMemo<Tree | null>(() => {
    if (!current || !schema || !live) return null;
    return { schema, kase: current, live, editable, me, role };
  }, [current, schema, live, editable, me, role]);

  if (!current || !tree) {
    if (stopped) return <p role="alert" data-testid="stopped-banner">{stoppedText(error)}</p>;
    return <p role="status">Loading the case…</p>;
  }

  return (
    <article className="case" data-testid="case-editor" data-status={status} aria-labelledby="case-title">
      <header className="case-header">
        <div>
          <h1 id="case-title">{current.title}</h1>
          <p className="muted">
            Your role: <span data-testid="role">{role}</span>
            {isManager(role) ? (
              <>
                {' · '}
                <a href={href({ name: 'audit', slug })}>Audit trail</a>
              </>
            ) : null}
          </p>
        </div>
        <AvatarStack online={onlineUsers} />
      </header>

      {status === 'reconnecting' ? (
        <p className="banner banner-info" role="status" data-testid="connection">
          Connection lost — reconnecting…
        </p>
      ) : null}
      {stopped ? (
        <p className="banner banner-error" role="alert" data-testid="stopped-banner">
          {stoppedText(error)}
        </p>
      ) : null}
      {!canEdit(role) && role ? (
        <p className="muted" data-testid="reader-note">
          You can read this case; editing needs the editor role.
        </p>
      ) : null}

      <TreeContext.Provider value={tree}>
        <DragContext.Provider value={dragging}>
          {tree.schema.childrenOf('Case').map((type) => (
            <CaseSection key={type.name} tree={tree} type={type} />
          ))}
        </DragContext.Provider>
      </TreeContext.Provider>
    </article>
  );
}

/**
 * Leaving the case (another screen; the app asked first when a draft had
 * changes) ends its edits: its drafts are dropped and the tab's locks in it
 * released. A tick later, so that StrictMode's unmount-and-mount-again ends
 * nothing.
 */
function useLeaving(live: ReturnType<typeof useLiveCase>): void {
  const baton = useBaton();
  const leaving = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!live) return;
    if (leaving.current) clearTimeout(leaving.current);
    leaving.current = null;
    return () => {
      leaving.current = setTimeout(() => {
        leaving.current = null;
        const state = live.getState();
        const caseId = state.case?.id;
        for (const draft of baton.drafts.all()) {
          const inCase = live.store.get(draft.key) !== undefined || ('caseId' in draft.base && draft.base.caseId === caseId);
          if (inCase) baton.drafts.discard(draft.key);
        }
        for (const lock of state.locks) if (baton.locks.isOwned(lock)) void baton.locks.release(lock.lockable).catch(() => undefined);
      }, 0);
    };
  }, [baton, live]);
}

/** The case's records of one type: each as a section when the type has children, else as a list. */
const CaseSection = memo(function CaseSection({ tree, type }: { tree: Tree; type: DeclaredType }) {
  const current = tree.kase;
  const records = useChildren(tree, `Case/${current.param}`, type.name);
  const keep = useKeepDrafted();
  const { editable } = tree;
  if (tree.schema.childrenOf(type.name).length > 0) {
    return (
      <div data-testid={`sections-${kebab(type.name)}`}>
        <VirtualList
          as="div"
          className="sections"
          items={records}
          keyOf={(record) => record.param}
          estimate={320}
          keep={keep}
          render={(record, row) => <RecordSection key={record.param} record={record} type={type} parent={current} row={row} />}
        />
        {editable ? <AddRecord type={type} parent={current} /> : null}
      </div>
    );
  }
  const id = `${kebab(type.plural)}-title`;
  return (
    <section className="leaf-section" aria-labelledby={id}>
      <h2 id={id}>{words(type.plural)}</h2>
      {records.length === 0 ? <p className="muted">{`No ${lowerWords(type.plural)} yet.`}</p> : null}
      <VirtualList
        as="ul"
        className="leaf-items"
        items={records}
        keyOf={(record) => record.param}
        estimate={160}
        keep={keep}
        render={(record, row) => <RecordItem key={record.param} record={record} type={type} parent={current} look="note" row={row} />}
      />
      {editable ? <AddRecord type={type} parent={current} /> : null}
    </section>
  );
});
