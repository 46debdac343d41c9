/**
 * What every record of the case editor needs to know about the tree it is
 * in: the schema in force, each record's children, their numbers, and who
 * is looking. Shared by context, so nesting goes as deep as the schema does.
 */
import type { AnyRecord, Case, CaseView, DeclaredType, LiveCase, LiveState, Role, Schema, User } from '@baton/client';
import { useDrafts, useLiveSelector } from '@baton/react';
import { createContext, useCallback, useContext, type MutableRefObject } from 'react';
import { fieldLabel, fieldOrder, isTextOnly, kebab, numbering, recordName, controlOf, type Control } from './schemaText';

/**
 * What every record of the case editor shares: only values that stay the
 * same while records change (the schema, the case, who is looking, the open
 * case itself). Each record selects its own data from `live`, so a change
 * to one record re-renders that record and not its siblings.
 */
export interface Tree {
  schema: Schema;
  kase: Case;
  live: LiveCase;
  editable: boolean;
  me: User;
  role: Role | null;
}

export const TreeContext = createContext<Tree | null>(null);

export function useTree(): Tree {
  const tree = useContext(TreeContext);
  if (!tree) throw new Error('useTree: outside the case editor');
  return tree;
}

type Children = CaseView['children'];
const NONE: AnyRecord[] = [];

/** The children of a record (or the case) of one type, in order, from a state of the case. */
export const childrenIn = (children: Children, parentKey: string, type: string): AnyRecord[] => children[parentKey]?.[type] ?? NONE;

/** The children of a record (or the case) of one type as they are now (for event handlers). */
export const childrenNow = (tree: Tree, parentKey: string, type: string): AnyRecord[] =>
  childrenIn(tree.live.getState().children, parentKey, type);

/** The children of a record (or the case) of one type, live: re-renders only when that list changes. */
export function useChildren(tree: Tree, parentKey: string, type: string): AnyRecord[] {
  return useLiveSelector(tree.live, (s: LiveState) => childrenIn(s.children, parentKey, type));
}

/** Each record's index in a list, computed once per list (a list of thousands is not searched once per record). */
const indexCache = new WeakMap<AnyRecord[], Map<number, number>>();
function indexIn(list: AnyRecord[], record: AnyRecord): number {
  let index = indexCache.get(list);
  if (!index) {
    index = new Map(list.map((r, i) => [r.id, i]));
    indexCache.set(list, index);
  }
  return index.get(record.id) ?? -1;
}

/** Where a record is among its siblings, and how many there are, live (two numbers: a sibling's edit changes neither). */
export function usePlace(tree: Tree, parentKey: string, record: AnyRecord): { index: number; count: number } {
  const index = useLiveSelector(tree.live, (s: LiveState) => indexIn(childrenIn(s.children, parentKey, record.type), record));
  const count = useLiveSelector(tree.live, (s: LiveState) => childrenIn(s.children, parentKey, record.type).length);
  return { index, count };
}

/** Each record's number among its type's records, computed once per state of the case. */
const numbersCache = new WeakMap<Children, Map<string, number>>();
function numbersOf(children: Children, schema: Schema, kase: Case): Map<string, number> {
  let numbers = numbersCache.get(children);
  if (!numbers) {
    numbers = numbering(schema, children, `Case/${kase.param}`);
    numbersCache.set(children, numbers);
  }
  return numbers;
}

/** A record's key: `Card/12`. */
export const keyOf = (record: { type: string; param: string }): string => `${record.type}/${record.param}`;

const numberIn = (tree: Tree, children: Children, record: AnyRecord): number => numbersOf(children, tree.schema, tree.kase).get(keyOf(record)) ?? 0;

/** The name of a record for people ("Card 2", "Edgenote chart"), live. */
export function useName(tree: Tree, type: DeclaredType, record: AnyRecord): string {
  const number = useLiveSelector(tree.live, (s: LiveState) => numberIn(tree, s.children, record));
  return recordName(type, record, number);
}

/** Every record of a type in the order the case shows it (its parents' order, then its own). */
export function inCaseOrder(tree: Tree, children: Children, type: DeclaredType): AnyRecord[] {
  const parents = type.parent === 'Case' ? [tree.kase] : inCaseOrder(tree, children, tree.schema.type(type.parent)!);
  return parents.flatMap((p) => childrenIn(children, keyOf(p), type.name));
}

export interface Named {
  record: AnyRecord;
  name: string;
}
const sameNamed = (a: Named[], b: Named[]): boolean =>
  a.length === b.length && a.every((x, i) => x.record === b[i]!.record && x.name === b[i]!.name);

/** Every record of a type in case order with its name, live (for "Move to page…"): re-renders only when one of them changes. */
export function useNamedInCaseOrder(tree: Tree, type: DeclaredType | undefined): Named[] {
  return useLiveSelector(
    tree.live,
    (s: LiveState) => (type ? inCaseOrder(tree, s.children, type).map((record) => ({ record, name: recordName(type, record, numberIn(tree, s.children, record)) })) : []),
    sameNamed,
  );
}

/** How each field of a record is shown: its control, its accessible name, its visible label, its test id. */
export interface FieldPlan {
  field: string;
  control: Control;
  /** The field's accessible name: the record's name for a record of one field, else "<record> <field>". */
  label: string;
  /** The field's label in the form: its JSON Schema `title`, else its name in words. */
  title: string;
  testId: string;
}

/**
 * The fields of a record's form, label field first. A record that is its
 * text alone is named by the record ("Card 2"); otherwise each field is
 * named after the record ("The harbour title"), has its label ("Title")
 * and a test id of its own (`field-<Type>-<param>-<field>`).
 */
export function fieldPlans(type: DeclaredType, record: AnyRecord, name: string): FieldPlan[] {
  const order = fieldOrder(type);
  const textOnly = isTextOnly(type);
  return order.map((field) => {
    const schema = type.fields[field];
    const title = fieldLabel(field, schema);
    return {
      field,
      control: controlOf(schema),
      label: textOnly ? name : `${name} ${title.toLowerCase()}`,
      title,
      testId: `field-${type.name}-${record.param}-${field}`,
    };
  });
}

export const testIdOf = (type: DeclaredType, record: AnyRecord): string => `${kebab(type.name)}-${record.param}`;

/** The keys of the records with a draft, as one string: the same string while only the text of a draft changes. */
const draftKeys = (drafts: readonly { key: string }[]): string => (drafts.length ? `\n${drafts.map((d) => d.key).join('\n')}\n` : '');

/**
 * Which records of a list stay mounted however far they are scrolled: those
 * with a draft (an open form keeps its focus and its place). Re-renders the
 * list only when a draft starts or ends.
 */
export function useKeepDrafted(): (record: AnyRecord) => boolean {
  const keys = useDrafts(draftKeys);
  return useCallback((record: AnyRecord) => keys !== '' && keys.includes(`\n${keyOf(record)}\n`), [keys]);
}

/** The record being dragged in this tab, and how to finish its move: set at drag start, read by the drop target. */
export interface DragSession {
  record: AnyRecord;
  /** A drop target took it: the drag's end does not cancel. */
  dropped: boolean;
  /** Puts the record at `index` among the target parent's other children of its type. */
  moveTo: (target: AnyRecord, index: number) => Promise<boolean>;
}

export const DragContext = createContext<MutableRefObject<DragSession | null>>({ current: null });

/** The drag in progress in this tab, if any. */
export const useDragSession = () => useContext(DragContext);
