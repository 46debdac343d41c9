import { LockHeldError, type AnyRecord, type Case, type DeclaredType } from '@baton/client';
import { useBaton, useLock } from '@baton/react';
import { memo, useState, type DragEvent } from 'react';
import { AddRecord } from './AddRecord';
import { useAnnounce } from './Announcer';
import { Avatar } from './Avatar';
import { DeleteButton } from './DeleteButton';
import { isDeep } from './fieldMachine';
import { isManager, message } from './format';
import { planMove } from './moves';
import { RecordForm } from './RecordForm';
import { RecordItem } from './RecordItem';
import { lowerWords, words } from './schemaText';
import { childrenNow, keyOf, testIdOf, useChildren, useDragSession, useKeepDrafted, useName, usePlace, useTree, type Tree } from './tree';
import { countRender } from './renderCount';
import { rowProps, VirtualList, type VirtualRow } from './VirtualList';

export interface RecordSectionProps {
  record: AnyRecord;
  type: DeclaredType;
  parent: AnyRecord | Case;
  /** Its place in a long list that renders only what is on screen. */
  row?: VirtualRow | undefined;
}

/** What a refused "Lock … for restructuring" tells the manager: everyone in the way. */
function restructureRefusal(error: unknown, thing: string): string {
  if (error instanceof LockHeldError) {
    const names = error.holders.map((u) => u.name).join(', ');
    return `Not locked: ${names} ${error.holders.length > 1 ? 'are' : 'is'} editing in this ${thing}. ${error.message}`;
  }
  return `Not locked: ${message(error)}`;
}

const slot = (r: AnyRecord) => ({ id: r.id, position: r.position ?? 0 });

/**
 * A record with children (a page, a column, a division): its fields, its
 * children of each type (each movable where the schema says so), "Add
 * <type>" for each, and for managers "Lock … for restructuring": a deep
 * lock on the record that covers everything under it, so nobody else
 * edits, moves or adds there until it ends.
 */
export const RecordSection = memo(function RecordSection({ record, type, parent, row }: RecordSectionProps) {
  const tree = useTree();
  countRender(keyOf(record));
  const baton = useBaton();
  const announce = useAnnounce();
  const lock = useLock(record);
  const session = useDragSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [reordering, setReordering] = useState(false);
  const [over, setOver] = useState(false);
  const { editable, me, role, schema } = tree;
  const name = useName(tree, type, record);
  const thing = lowerWords(type.name);
  const childTypes = schema.childrenOf(type.name);
  const { index, count: siblingCount } = usePlace(tree, keyOf(parent), record);
  const deep = isDeep(lock.lock) ? lock.lock : null;
  const mineDeep = lock.state === 'owned' && deep !== null;
  // someone else restructures the record (or one above it, or the case)
  const theirsDeep = lock.state === 'locked' && deep !== null ? deep : null;
  const key = keyOf(record);

  async function restructure(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await lock.acquire({ depth: 'infinity' });
    } catch (e) {
      setError(restructureRefusal(e, thing));
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

  /** Up or down among its siblings: under its lock, its new position (and the others' when there was no room). */
  async function reorder(at: number): Promise<void> {
    setBusy(true);
    setReordering(true);
    setError(null);
    try {
      await lock.acquire();
      const others = childrenNow(tree, keyOf(parent), type.name).filter((s) => s.id !== record.id);
      const plan = planMove(slot(record), others.map(slot), at);
      await baton.save(record, { position: plan.position });
      for (const step of plan.renumber) {
        const other = others.find((s) => s.id === step.id);
        if (other) await baton.save(other, { position: step.position });
      }
      announce(`${name} moved ${at < index ? 'up' : 'down'}`);
    } catch (e) {
      setError(`Not moved: ${message(e)}`);
    } finally {
      await lock.release().catch(() => {});
      setReordering(false);
      setBusy(false);
    }
  }

  /** A record being dragged over the section: a drop is welcome when it may live here (the server has the last word). */
  function onDragOver(event: DragEvent): void {
    const current = session.current;
    if (!current || !childTypes.some((t) => t.name === current.record.type)) return;
    event.preventDefault();
    event.stopPropagation();
    event.dataTransfer.dropEffect = 'move';
    if (!over) setOver(true);
  }

  /** Dropped on a child: before it in its upper half, after it in its lower half; anywhere else in the section: last. */
  function onDrop(event: DragEvent): void {
    setOver(false);
    const current = session.current;
    if (!current || !childTypes.some((t) => t.name === current.record.type)) return;
    event.preventDefault();
    event.stopPropagation();
    current.dropped = true;
    const moving = current.record;
    const list = childrenNow(tree, key, moving.type);
    const others = list.filter((c) => c.id !== moving.id);
    let at = others.length;
    const item = event.target instanceof Element ? event.target.closest<HTMLElement>(`[data-record-type="${moving.type}"]`) : null;
    if (item) {
      const onto = others.findIndex((c) => String(c.id) === item.dataset.recordId);
      const rect = item.getBoundingClientRect();
      if (onto >= 0) at = event.clientY > rect.top + rect.height / 2 ? onto + 1 : onto;
      // dropped on itself: it stays where it is
      else if (item.dataset.recordId === String(moving.id)) at = list.findIndex((c) => c.id === moving.id);
    }
    void current.moveTo(record, at);
  }

  const childPlurals = childTypes.map((t) => lowerWords(t.plural)).join(' and ');
  const placed = rowProps(row);
  return (
    <section
      ref={row?.measure}
      data-index={placed['data-index']}
      className={`record-section${over ? ' section-drop' : ''}${deep ? ' section-restructuring' : ''} ${placed.className}`.trim()}
      aria-label={name}
      data-testid={testIdOf(type, record)}
      data-record-id={record.id}
      data-record-type={type.name}
      onDragOver={onDragOver}
      onDragLeave={(e) => {
        if (!(e.relatedTarget instanceof Node && e.currentTarget.contains(e.relatedTarget))) setOver(false);
      }}
      onDrop={onDrop}
      style={{ ...placed.style, ...(theirsDeep ? { borderColor: theirsDeep.user.color } : {}) }}
    >
      <h2 className="record-title section-title">{name}</h2>
      <div className="record-head">
        <RecordForm type={type} record={record} name={name} moving={reordering} />
      </div>
      {theirsDeep ? (
        <p className="banner banner-info restructure-banner" role="status" data-testid="restructure-banner">
          <Avatar name={theirsDeep.user.name} color={theirsDeep.user.color} size="small" decorative />
          {theirsDeep.user.id === me.id
            ? `You are restructuring this ${lowerWords(theirsDeep.lockable.type)} in another tab`
            : `${theirsDeep.user.name} is restructuring this ${lowerWords(theirsDeep.lockable.type)}`}
        </p>
      ) : null}
      {mineDeep ? (
        <p className="banner banner-info restructure-banner" role="status" data-testid="restructure-banner">
          {`You are restructuring this ${thing}: nobody else can edit, move or add its ${childPlurals}.`}
          <button type="button" className="secondary" onClick={() => void done()} disabled={busy} aria-label={`Done restructuring ${name}`}>
            Done restructuring
          </button>
        </p>
      ) : null}
      {editable && (lock.state === 'unlocked' || type.ordered) ? (
        <p className="record-tools">
          {isManager(role) && lock.state === 'unlocked' ? (
            <button type="button" className="secondary" onClick={() => void restructure()} disabled={busy} aria-label={`Lock ${name} for restructuring`}>
              {`Lock ${thing} for restructuring`}
            </button>
          ) : null}
          {type.ordered && siblingCount > 1 ? (
            <>
              <button type="button" className="secondary" disabled={busy || lock.state !== 'unlocked' || index <= 0} onClick={() => void reorder(index - 1)} aria-label={`Move ${name} up`}>
                ↑ Up
              </button>
              <button
                type="button"
                className="secondary"
                disabled={busy || lock.state !== 'unlocked' || index >= siblingCount - 1}
                onClick={() => void reorder(index + 1)}
                aria-label={`Move ${name} down`}
              >
                ↓ Down
              </button>
            </>
          ) : null}
          {lock.state === 'unlocked' ? <DeleteButton record={record} label={name} disabled={busy} /> : null}
        </p>
      ) : null}
      {error ? (
        <p className="error" role="alert" data-testid="restructure-error">
          {error}
        </p>
      ) : null}
      {childTypes.map((childType) => (
        <Children key={childType.name} tree={tree} record={record} type={childType} name={name} thing={thing} />
      ))}
    </section>
  );
});

/** A record's children of one type: re-renders when that list changes, not when the record or a sibling list does. */
const Children = memo(function Children({ tree, record, type, name, thing }: { tree: Tree; record: AnyRecord; type: DeclaredType; name: string; thing: string }) {
  const children = useChildren(tree, keyOf(record), type.name);
  const keep = useKeepDrafted();
  const nested = tree.schema.childrenOf(type.name).length > 0;
  return (
    <div className="children">
      {nested ? (
        <VirtualList
          as="div"
          className="sections"
          items={children}
          keyOf={(child) => child.param}
          estimate={320}
          keep={keep}
          render={(child, row) => <RecordSection key={child.param} record={child} type={type} parent={record} row={row} />}
        />
      ) : (
        <VirtualList
          as="ul"
          className="items"
          label={`${words(type.plural)} of ${name}`}
          items={children}
          keyOf={(child) => child.param}
          estimate={130}
          keep={keep}
          render={(child, row) => <RecordItem key={child.param} record={child} type={type} parent={record} look="card" row={row} />}
        />
      )}
      {children.length === 0 ? (
        <p className="muted drop-hint">{`No ${lowerWords(type.plural)} on this ${thing}${type.movable ? ': drop one here' : ''}.`}</p>
      ) : null}
      {tree.editable ? <AddRecord type={type} parent={record} parentName={name} /> : null}
    </div>
  );
});
