import { KickedError, NotFoundError, ForbiddenError, UnauthorizedError, type User } from '@baton/client';
import { useCase } from '@baton/react';
import { useMemo, useRef } from 'react';
import { AddRecord } from './AddRecord';
import { AvatarStack } from './AvatarStack';
import { canEdit, isManager } from './format';
import { RecordItem } from './RecordItem';
import { RecordSection } from './RecordSection';
import { href } from './router';
import { kebab, lowerWords, numbering, words } from './schemaText';
import { DragContext, TreeContext, childrenOf, type DragSession, type Tree } from './tree';

function stoppedText(error: Error | null): string {
  if (error instanceof KickedError) return 'An administrator closed this tab. Your locks were released; reload the page to open the case again.';
  if (error instanceof NotFoundError) return 'This case no longer exists.';
  if (error instanceof ForbiddenError) return 'You no longer have access to this case.';
  if (error instanceof UnauthorizedError) return 'Your sign-in has ended. Please sign in again.';
  return error ? `This case stopped updating: ${error.message}` : 'This case stopped updating.';
}

/**
 * A case with the records of whatever schema is in force, live, with locks
 * and presence: each type under the case as a section, children under their
 * parent.
 */
export function CaseEditor({ slug, me }: { slug: string; me: User }) {
  const { case: current, role, schema, children, onlineUsers, status, error } = useCase(slug);
  const stopped = status === 'stopped';
  const editable = canEdit(role) && !stopped;
  const dragging = useRef<DragSession | null>(null);
  const tree = useMemo<Tree | null>(() => {
    if (!current || !schema) return null;
    const numbers = numbering(schema, children, `Case/${current.param}`);
    return { schema, kase: current, children, numbers, editable, me, role };
  }, [current, schema, children, editable, me, role]);

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
          {tree.schema.childrenOf('Case').map((type) => {
            const records = childrenOf(tree, `Case/${current.param}`, type.name);
            if (tree.schema.childrenOf(type.name).length > 0) {
              return (
                <div key={type.name} className="sections" data-testid={`sections-${kebab(type.name)}`}>
                  {records.map((record) => (
                    <RecordSection key={record.param} record={record} type={type} parent={current} />
                  ))}
                  {editable ? <AddRecord type={type} parent={current} count={records.length} /> : null}
                </div>
              );
            }
            const id = `${kebab(type.plural)}-title`;
            return (
              <section key={type.name} className="leaf-section" aria-labelledby={id}>
                <h2 id={id}>{words(type.plural)}</h2>
                {records.length === 0 ? <p className="muted">{`No ${lowerWords(type.plural)} yet.`}</p> : null}
                <ul>
                  {records.map((record) => (
                    <RecordItem key={record.param} record={record} type={type} parent={current} look="note" />
                  ))}
                </ul>
                {editable ? <AddRecord type={type} parent={current} count={records.length} /> : null}
              </section>
            );
          })}
        </DragContext.Provider>
      </TreeContext.Provider>
    </article>
  );
}
