import { LockHeldError, type PageView, type Role, type User } from '@baton/client';
import { useLock } from '@baton/react';
import { useState, type DragEvent } from 'react';
import { Avatar } from './Avatar';
import { isDeep } from './fieldMachine';
import { isManager, message } from './format';
import { LockableField } from './LockableField';
import { MovableCard, useDragSession } from './MovableCard';

export interface PageSectionProps {
  page: PageView;
  /** The page's place in the case (0-based). */
  index: number;
  pages: PageView[];
  /** Each card's number in the case, by its param. */
  numbers: Map<string, number>;
  editable: boolean;
  me: User;
  role: Role | null;
}

/** What a refused "Lock page for restructuring" tells the manager: everyone in the way. */
function restructureRefusal(error: unknown): string {
  if (error instanceof LockHeldError) {
    const names = error.holders.map((u) => u.name).join(', ');
    return `Not locked: ${names} ${error.holders.length > 1 ? 'are' : 'is'} editing in this page. ${error.message}`;
  }
  return `Not locked: ${message(error)}`;
}

/**
 * A page: its title, its cards (each movable), and, for managers, "Lock
 * page for restructuring": a deep lock on the page that covers every card
 * in it, so nobody else edits, moves or adds cards there until it ends.
 */
export function PageSection({ page, index, pages, numbers, editable, me, role }: PageSectionProps) {
  const lock = useLock(page);
  const session = useDragSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [over, setOver] = useState(false);
  const name = `Page ${index + 1}`;
  const deep = isDeep(lock.lock) ? lock.lock : null;
  const mineDeep = lock.state === 'mine' && deep !== null;
  // someone else restructures the page (or its whole case)
  const theirsDeep = lock.state === 'theirs' && deep !== null ? deep : null;

  async function restructure(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await lock.acquire({ depth: 'infinity' });
    } catch (e) {
      setError(restructureRefusal(e));
    } finally {
      setBusy(false);
    }
  }

  async function done(): Promise<void> {
    setBusy(true);
    try {
      await lock.release();
    } catch (e) {
      setError(`Not released: ${message(e)}`);
    } finally {
      setBusy(false);
    }
  }

  /** A card dragged over the page: a drop is welcome (the server has the last word). */
  function onDragOver(event: DragEvent): void {
    if (!session.current) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
    if (!over) setOver(true);
  }

  /** Dropped on a card: before it in its upper half, after it in its lower half; anywhere else on the page: last. */
  function onDrop(event: DragEvent): void {
    setOver(false);
    const current = session.current;
    if (!current) return;
    event.preventDefault();
    current.dropped = true;
    const others = page.cards.filter((c) => c.id !== current.card.id);
    let at = others.length;
    const item = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-card-id]') : null;
    if (item) {
      const onto = others.findIndex((c) => String(c.id) === item.dataset.cardId);
      const rect = item.getBoundingClientRect();
      if (onto >= 0) at = event.clientY > rect.top + rect.height / 2 ? onto + 1 : onto;
      // dropped on itself: it stays where it is
      else if (item.dataset.cardId === String(current.card.id)) at = page.cards.findIndex((c) => c.id === current.card.id);
    }
    void current.moveTo(page, at);
  }

  return (
    <section
      className={`page${over ? ' page-drop' : ''}${deep ? ' page-restructuring' : ''}`}
      aria-label={`${name}: ${page.title}`}
      data-testid={`page-${page.param}`}
      onDragOver={onDragOver}
      onDragLeave={(e) => {
        if (!(e.relatedTarget instanceof Node && e.currentTarget.contains(e.relatedTarget))) setOver(false);
      }}
      onDrop={onDrop}
      style={theirsDeep ? { borderColor: theirsDeep.user.color } : undefined}
    >
      <h2 className="visually-hidden">{page.title}</h2>
      <div className="page-title">
        <LockableField record={page} field="title" label={`${name} title`} noun="this page title" editable={editable} me={me} role={role} />
      </div>
      {theirsDeep ? (
        <p className="banner banner-info restructure-banner" role="status" data-testid="restructure-banner">
          <Avatar name={theirsDeep.user.name} color={theirsDeep.user.color} size="small" decorative />
          {theirsDeep.user.id === me.id
            ? `You are restructuring ${theirsDeep.lockable.type === 'Case' ? 'this case' : 'this page'} in another tab`
            : `${theirsDeep.user.name} is restructuring ${theirsDeep.lockable.type === 'Case' ? 'this case' : 'this page'}`}
        </p>
      ) : null}
      {mineDeep ? (
        <p className="banner banner-info restructure-banner" role="status" data-testid="restructure-banner">
          You are restructuring this page: nobody else can edit, move or add its cards.
          <button type="button" className="secondary" onClick={() => void done()} disabled={busy} aria-label={`Done restructuring ${name}`}>
            Done restructuring
          </button>
        </p>
      ) : null}
      {editable && isManager(role) && lock.state === 'free' ? (
        <p className="page-tools">
          <button type="button" className="secondary" onClick={() => void restructure()} disabled={busy} aria-label={`Lock ${name} for restructuring`}>
            Lock page for restructuring
          </button>
        </p>
      ) : null}
      {error ? (
        <p className="error" role="alert" data-testid="restructure-error">
          {error}
        </p>
      ) : null}
      <ul className="cards" aria-label={`Cards of ${name}`}>
        {page.cards.map((card) => (
          <MovableCard
            key={card.param}
            card={card}
            number={numbers.get(card.param) ?? 0}
            page={page}
            pages={pages}
            editable={editable}
            me={me}
            role={role}
          />
        ))}
      </ul>
      {page.cards.length === 0 ? <p className="muted drop-hint">No cards on this page: drop one here.</p> : null}
    </section>
  );
}
