import type { Card, PageView, Role, User } from '@baton/client';
import { useBaton, useDragLock, useLock, type MoveTarget } from '@baton/react';
import { createContext, useContext, useRef, useState, type DragEvent, type MutableRefObject } from 'react';
import { useAnnounce } from './Announcer';
import { moveRefusal } from './fieldMachine';
import { message } from './format';
import { LockableField } from './LockableField';
import { planMove, staysPut } from './moves';

/** The card being dragged in this tab, and how to finish its move: set at drag start, read by the drop target. */
export interface DragSession {
  card: Card;
  /** A drop target took it: the drag's end does not cancel. */
  dropped: boolean;
  /** Puts the card at `index` among the target page's other cards. */
  moveTo: (target: PageView, index: number) => Promise<boolean>;
}

export const DragContext = createContext<MutableRefObject<DragSession | null>>({ current: null });

/** The drag in progress in this tab, if any. */
export const useDragSession = () => useContext(DragContext);

type Save = ReturnType<typeof useBaton>['save'];

/**
 * Moves a card under the lock its drag (or move button) took: the card's own
 * PATCH with its new page and key, then the target page's renumbering when
 * there was no room (see moves.ts). A refused move is the drag's error; a
 * renumbering refused halfway is returned as a notice.
 */
async function performMove(
  save: Save,
  drop: (to: MoveTarget) => Promise<Card | null>,
  card: Card,
  target: PageView,
  index: number,
): Promise<{ moved: boolean; note: string | null }> {
  const others = target.cards.filter((c) => c.id !== card.id);
  const plan = planMove(card, others, index);
  const moved = await drop({ pageId: target.id, position: plan.position });
  if (!moved) return { moved: false, note: null };
  for (const slot of plan.renumber) {
    const other = others.find((c) => c.id === slot.id);
    if (!other) continue;
    try {
      await save(other, { position: slot.position });
    } catch (e) {
      return { moved: true, note: `Moved, but the cards around it could not be put in order: ${message(e)}` };
    }
  }
  return { moved: true, note: null };
}

export interface MovableCardProps {
  card: Card;
  /** The card's number in the case, for its accessible names ("Card 2"). */
  number: number;
  page: PageView;
  pages: PageView[];
  editable: boolean;
  me: User;
  role: Role | null;
}

/**
 * A card that can be dragged (by its handle) within its page or to another
 * one, or moved with its buttons. The drag takes the card's lock, so
 * everyone sees who is moving it; the drop saves the move and releases it.
 */
export function MovableCard({ card, number, page, pages, editable, me, role }: MovableCardProps) {
  const baton = useBaton();
  const announce = useAnnounce();
  const drag = useDragLock(card);
  const lock = useLock(card);
  const session = useDragSession();
  const [moving, setMoving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [destination, setDestination] = useState('');
  const itemRef = useRef<HTMLLIElement>(null);
  const label = `Card ${number}`;
  const index = page.cards.findIndex((c) => c.id === card.id);
  // someone else holds it (or its page), or this tab is editing its text
  const canMove = editable && !moving && lock.state !== 'theirs' && lock.state !== 'lost' && lock.state !== 'mine';
  const otherPages = pages.filter((p) => p.id !== page.id);

  /** Whether the card moved. */
  async function moveTo(target: PageView, at: number): Promise<boolean> {
    setMoving(true);
    setNotice(null);
    if (staysPut(card, page.id, target.id, page.cards, at)) {
      await drag.cancel();
      setMoving(false);
      return false;
    }
    const { moved, note } = await performMove(baton.save.bind(baton), drag.drop, card, target, at);
    setMoving(false);
    if (note) setNotice(note);
    return moved;
  }

  /** A move button: the card's lock, the move, the release. */
  async function moveBy(target: PageView, at: number): Promise<void> {
    setMoving(true);
    setNotice(null);
    await drag.start();
    if (!(await moveTo(target, at))) return;
    const pageNumber = pages.findIndex((p) => p.id === target.id) + 1;
    announce(`${label} moved${target.id === page.id ? '' : ` to page ${pageNumber}`}`);
    // the card may have a new place in the list: keep the focus on it
    requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`[data-testid="field-Card-${card.param}"] [data-testid="field-input"]`)?.focus(),
    );
  }

  function onDragStart(event: DragEvent): void {
    if (!canMove) {
      event.preventDefault();
      return;
    }
    event.dataTransfer.effectAllowed = 'move';
    event.dataTransfer.setData('text/plain', `Card/${card.param}`);
    if (itemRef.current) event.dataTransfer.setDragImage(itemRef.current, 12, 12);
    session.current = { card, dropped: false, moveTo };
    // the drag source is left alone while the browser starts the drag
    setTimeout(() => {
      setMoving(true);
      setNotice(null);
    }, 0);
    void drag.start();
  }

  function onDragEnd(): void {
    const current = session.current;
    if (current?.card.id !== card.id) return;
    session.current = null;
    if (!current.dropped) {
      void drag.cancel();
      setMoving(false);
    }
  }

  const refusal = drag.error ? moveRefusal(drag.error, label, message(drag.error)) : null;
  return (
    <li ref={itemRef} className={`card${moving ? ' card-moving' : ''}`} data-testid={`card-${card.param}`} data-card-id={card.id}>
      <div className="card-row">
        <span
          className={`drag-handle${canMove ? '' : ' drag-handle-off'}`}
          draggable={canMove || moving}
          onDragStart={onDragStart}
          onDragEnd={onDragEnd}
          title={canMove ? `Drag ${label} to move it` : undefined}
          data-testid="drag-handle"
          aria-hidden="true"
        >
          ⠿
        </span>
        <div className="card-body">
          <LockableField
            record={card}
            field="content"
            label={label}
            noun="this card"
            multiline
            editable={editable}
            me={me}
            role={role}
            moving={moving || drag.dragging}
          />
        </div>
      </div>
      {editable ? (
        <div className="move-bar">
          <button
            type="button"
            className="secondary"
            disabled={!canMove || index <= 0}
            onClick={() => void moveBy(page, index - 1)}
            aria-label={`Move ${label} up`}
            data-testid={`move-up-${card.param}`}
          >
            ↑ Up
          </button>
          <button
            type="button"
            className="secondary"
            disabled={!canMove || index >= page.cards.length - 1}
            onClick={() => void moveBy(page, index + 1)}
            aria-label={`Move ${label} down`}
          >
            ↓ Down
          </button>
          {otherPages.length > 0 ? (
            <>
              <select
                value={destination}
                onChange={(e) => setDestination(e.target.value)}
                disabled={!canMove}
                aria-label={`Page to move ${label} to`}
              >
                <option value="">Move to page…</option>
                {otherPages.map((p) => (
                  <option key={p.param} value={p.param}>
                    {`Page ${pages.indexOf(p) + 1}: ${p.title}`}
                  </option>
                ))}
              </select>
              <button
                type="button"
                className="secondary"
                disabled={!canMove || destination === ''}
                onClick={() => {
                  const target = otherPages.find((p) => p.param === destination);
                  setDestination('');
                  if (target) void moveBy(target, target.cards.length);
                }}
                aria-label={`Move ${label} to the chosen page`}
              >
                Move
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {refusal || notice ? (
        <p className="error" role="alert" data-testid="move-notice">
          {refusal ?? notice}
        </p>
      ) : null}
    </li>
  );
}
