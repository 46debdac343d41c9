import { KickedError, NotFoundError, ForbiddenError, UnauthorizedError, type User } from '@baton/client';
import { useCase } from '@baton/react';
import { useRef } from 'react';
import { AvatarStack } from './AvatarStack';
import { canEdit, isManager } from './format';
import { LockableField } from './LockableField';
import { DragContext, type DragSession } from './MovableCard';
import { PageSection } from './PageSection';
import { href } from './router';

function stoppedText(error: Error | null): string {
  if (error instanceof KickedError) return 'An administrator closed this tab. Your locks were released; reload the page to open the case again.';
  if (error instanceof NotFoundError) return 'This case no longer exists.';
  if (error instanceof ForbiddenError) return 'You no longer have access to this case.';
  if (error instanceof UnauthorizedError) return 'Your sign-in has ended. Please sign in again.';
  return error ? `This case stopped updating: ${error.message}` : 'This case stopped updating.';
}

/** A case's pages, cards and edgenotes, live, with locks and presence. */
export function CaseEditor({ slug, me }: { slug: string; me: User }) {
  const { case: current, role, pages, edgenotes, onlineUsers, status, error } = useCase(slug);
  const stopped = status === 'stopped';
  const editable = canEdit(role) && !stopped;
  const dragging = useRef<DragSession | null>(null);
  const numbers = new Map(pages.flatMap((page) => page.cards).map((card, i) => [card.param, i + 1]));

  if (!current) {
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

      <DragContext.Provider value={dragging}>
        {pages.map((page, index) => (
          <PageSection key={page.param} page={page} index={index} pages={pages} numbers={numbers} editable={editable} me={me} role={role} />
        ))}
      </DragContext.Provider>

      <section className="edgenotes" aria-labelledby="edgenotes-title">
        <h2 id="edgenotes-title">Edgenotes</h2>
        {edgenotes.length === 0 ? <p className="muted">No edgenotes yet.</p> : null}
        <ul>
          {edgenotes.map((note) => (
            <li key={note.param} className="edgenote">
              <LockableField record={note} field="caption" label={`Edgenote ${note.slug}`} noun="this edgenote" editable={editable} me={me} role={role} />
              <a className="muted" href={note.content} rel="noreferrer noopener" target="_blank">
                {note.content}
              </a>
            </li>
          ))}
        </ul>
      </section>
    </article>
  );
}
