import type { AnyRecord, Case, DeclaredType } from '@baton/client';
import { useBaton, useDragLock, useLock, type MoveTarget } from '@baton/react';
import { memo, useRef, useState, type DragEvent } from 'react';
import { useAnnounce } from './Announcer';
import { DeleteButton } from './DeleteButton';
import { moveRefusal } from './fieldMachine';
import { message } from './format';
import { planMove, staysPut } from './moves';
import { RecordForm } from './RecordForm';
import { isTextOnly, lowerWords, words } from './schemaText';
import { childrenNow, keyOf, testIdOf, useDragSession, useName, useNamedInCaseOrder, usePlace, useTree } from './tree';
import { countRender } from './renderCount';
import { rowProps, type VirtualRow } from './VirtualList';

type Save = ReturnType<typeof useBaton>['save'];

/**
 * Moves a record under the lock its drag (or move button) took: its own
 * PATCH with its new parent and key, then the target's renumbering when
 * there was no room (see moves.ts). A refused move is the drag's error; a
 * renumbering refused halfway is returned as a notice.
 */
async function performMove(
  save: Save,
  drop: (to: MoveTarget) => Promise<AnyRecord | null>,
  record: AnyRecord,
  siblings: AnyRecord[],
  parentId: number,
  index: number,
): Promise<{ moved: boolean; note: string | null }> {
  const others = siblings.filter((c) => c.id !== record.id);
  const slots = others.map((c) => ({ id: c.id, position: c.position ?? 0 }));
  const plan = planMove({ id: record.id, position: record.position ?? 0 }, slots, index);
  const moved = await drop({ parentId, position: plan.position });
  if (!moved) return { moved: false, note: null };
  for (const slot of plan.renumber) {
    const other = others.find((c) => c.id === slot.id);
    if (!other) continue;
    try {
      await save(other, { position: slot.position });
    } catch (e) {
      return { moved: true, note: `Moved, but the records around it could not be put in order: ${message(e)}` };
    }
  }
  return { moved: true, note: null };
}

export interface RecordItemProps {
  record: AnyRecord;
  type: DeclaredType;
  /** The record it is under: the case, or a record of its parent type. */
  parent: AnyRecord | Case;
  /** `card` in a list under a parent record, `note` in a section of the case. */
  look: 'card' | 'note';
  /** Its place in a long list that renders only what is on screen. */
  row?: VirtualRow | undefined;
}

/**
 * A record without children: its fields; for an ordered type "up" and
 * "down"; for a movable type a drag handle and "Move to <parent>…"; for
 * editors, "Delete". A drag or a move takes the record's lock, so everyone
 * sees who is moving it; the drop saves the move and releases it.
 */
export const RecordItem = memo(function RecordItem({ record, type, parent, look, row }: RecordItemProps) {
  const tree = useTree();
  countRender(keyOf(record));
  const baton = useBaton();
  const announce = useAnnounce();
  const drag = useDragLock(record);
  const lock = useLock(record);
  const session = useDragSession();
  const [moving, setMoving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [destination, setDestination] = useState('');
  const itemRef = useRef<HTMLLIElement>(null);
  const { editable } = tree;
  const label = useName(tree, type, record);
  const { index, count: siblingCount } = usePlace(tree, keyOf(parent), record);
  const parentType = type.parent === 'Case' ? undefined : tree.schema.type(type.parent);
  const movable = type.movable && parentType !== undefined;
  // someone else holds it (or a record it is in), or this tab is editing it
  const canMove = editable && !moving && lock.state !== 'locked' && lock.state !== 'lost' && lock.state !== 'owned';
  const parents = useNamedInCaseOrder(tree, movable ? parentType : undefined);
  const otherParents = parents.filter((p) => p.record.id !== parent.id);

  /** Whether it moved. */
  async function moveTo(target: AnyRecord | Case, at: number): Promise<boolean> {
    setMoving(true);
    setNotice(null);
    const targetSiblings = childrenNow(tree, keyOf(target), type.name);
    const siblings = childrenNow(tree, keyOf(parent), type.name);
    const slot = (r: AnyRecord) => ({ id: r.id, position: r.position ?? 0 });
    if (staysPut(slot(record), parent.id, target.id, siblings.map(slot), at)) {
      await drag.cancel();
      setMoving(false);
      return false;
    }
    // within the case itself (an ordered type under the case): the position alone
    const drop =
      target.type === 'Case'
        ? async (to: MoveTarget) => {
            const took = await drag.start();
            if (!took) return null;
            try {
              return await baton.save(record, { position: to.position });
            } finally {
              await drag.cancel();
            }
          }
        : drag.drop;
    const { moved, note } = await performMove(baton.save.bind(baton), drop, record, targetSiblings, target.id, at);
    setMoving(false);
    if (note) setNotice(note);
    return moved;
  }

  /** A move button: the record's lock, the move, the release. */
  async function moveBy(target: AnyRecord | Case, at: number): Promise<void> {
    setMoving(true);
    setNotice(null);
    if (target.type !== 'Case') await drag.start();
    if (!(await moveTo(target, at))) return;
    const number = parents.findIndex((p) => p.record.id === target.id) + 1;
    announce(`${label} moved${target.id === parent.id ? '' : ` to ${lowerWords(type.parent)} ${number}`}`);
    // it may have a new place in the list: keep the focus on it
    requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`[data-testid="field-${type.name}-${record.param}"] [data-testid="field-input"]`)?.focus(),
    );
  }

  function onDragStart(event: DragEvent): void {
    if (!canMove) {
      event.preventDefault();
      return;
    }
    event.dataTransfer.effectAllowed = 'move';
    event.dataTransfer.setData('text/plain', keyOf(record));
    if (itemRef.current) event.dataTransfer.setDragImage(itemRef.current, 12, 12);
    session.current = { record, dropped: false, moveTo };
    // the drag source is left alone while the browser starts the drag
    setTimeout(() => {
      setMoving(true);
      setNotice(null);
    }, 0);
    void drag.start();
  }

  function onDragEnd(): void {
    const current = session.current;
    if (current?.record.id !== record.id || current.record.type !== record.type) return;
    session.current = null;
    if (!current.dropped) {
      void drag.cancel();
      setMoving(false);
    }
  }

  const refusal = drag.error ? moveRefusal(drag.error, label, message(drag.error)) : null;
  const fields = <RecordForm type={type} record={record} name={label} headed={!isTextOnly(type)} moving={moving || drag.dragging} />;
  const placed = rowProps(row);
  return (
    <li
      ref={(el) => {
        itemRef.current = el;
        row?.measure(el);
      }}
      style={placed.style}
      data-index={placed['data-index']}
      className={`${look === 'card' ? 'item' : 'leaf-item'}${moving ? ' item-moving' : ''} ${placed.className}`.trim()}
      data-testid={testIdOf(type, record)}
      data-record-id={record.id}
      data-record-type={type.name}
    >
      {movable ? (
        <div className="item-row">
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
          <div className="item-body">{fields}</div>
        </div>
      ) : (
        fields
      )}
      {editable ? (
        <div className="move-bar">
          {type.ordered ? (
            <>
              <button
                type="button"
                className="secondary"
                disabled={!canMove || index <= 0}
                onClick={() => void moveBy(parent, index - 1)}
                aria-label={`Move ${label} up`}
                data-testid={`move-up-${record.param}`}
              >
                ↑ Up
              </button>
              <button
                type="button"
                className="secondary"
                disabled={!canMove || index >= siblingCount - 1}
                onClick={() => void moveBy(parent, index + 1)}
                aria-label={`Move ${label} down`}
              >
                ↓ Down
              </button>
            </>
          ) : null}
          {movable && otherParents.length > 0 ? (
            <>
              <select
                value={destination}
                onChange={(e) => setDestination(e.target.value)}
                disabled={!canMove}
                aria-label={`${words(type.parent)} to move ${label} to`}
              >
                <option value="">{`Move to ${lowerWords(type.parent)}…`}</option>
                {otherParents.map(({ record: p, name: parentName }) => (
                  <option key={p.param} value={p.param}>
                    {parentName}
                  </option>
                ))}
              </select>
              <button
                type="button"
                className="secondary"
                disabled={!canMove || destination === ''}
                onClick={() => {
                  const target = otherParents.find((p) => p.record.param === destination)?.record;
                  setDestination('');
                  if (target) void moveBy(target, childrenNow(tree, keyOf(target), type.name).length);
                }}
                aria-label={`Move ${label} to the chosen ${lowerWords(type.parent)}`}
              >
                Move
              </button>
            </>
          ) : null}
          <DeleteButton record={record} label={label} disabled={!canMove} />
        </div>
      ) : null}
      {refusal || notice ? (
        <p className="error" role="alert" data-testid="move-notice">
          {refusal ?? notice}
        </p>
      ) : null}
    </li>
  );
});
