/**
 * What every record of the case editor needs to know about the tree it is
 * in: the schema in force, each record's children, their numbers, and who
 * is looking. Shared by context, so nesting goes as deep as the schema does.
 */
import type { AnyRecord, Case, CaseView, DeclaredType, Role, Schema, User } from '@baton/client';
import { createContext, useContext, type MutableRefObject } from 'react';
import { fieldLabel, fieldOrder, kebab, lowerWords, recordName, controlOf, type Control } from './schemaText';

export interface Tree {
  schema: Schema;
  kase: Case;
  children: CaseView['children'];
  /** Each record's number among its type's records, by key. */
  numbers: Map<string, number>;
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

/** The children of a record (or the case) of one type, in order. */
export const childrenOf = (tree: Tree, parentKey: string, type: string): AnyRecord[] => tree.children[parentKey]?.[type] ?? [];

/** A record's key: `Card/12`. */
export const keyOf = (record: { type: string; param: string }): string => `${record.type}/${record.param}`;

/** The name of a record for people ("Card 2", "Edgenote chart"). */
export const nameOf = (tree: Tree, type: DeclaredType, record: AnyRecord): string =>
  recordName(type, record, tree.numbers.get(keyOf(record)) ?? 0);

/** Every record of a type in the order the case shows it (its parents' order, then its own). */
export function inCaseOrder(tree: Tree, type: DeclaredType): AnyRecord[] {
  const parents = type.parent === 'Case' ? [tree.kase] : inCaseOrder(tree, tree.schema.type(type.parent)!);
  return parents.flatMap((p) => childrenOf(tree, keyOf(p), type.name));
}

/** How each field of a record is shown: its control, its accessible name, what notices call it, its test id. */
export interface FieldPlan {
  field: string;
  control: Control;
  label: string;
  noun: string;
  testId: string;
}

/**
 * The fields of a record, label field first. A record whose only field is
 * a text area is its text ("Card 2", "this card"); otherwise each field is
 * named after the record ("Page 1 title", "this page title").
 */
export function fieldPlans(type: DeclaredType, record: AnyRecord, name: string): FieldPlan[] {
  const order = fieldOrder(type);
  return order.map((field, i) => {
    const schema = type.fields[field];
    const control = controlOf(schema);
    const alone = order.length === 1 && control === 'textarea';
    const words = fieldLabel(field, schema).toLowerCase();
    return {
      field,
      control,
      label: alone ? name : `${name} ${words}`,
      noun: alone ? `this ${lowerWords(type.name)}` : `this ${lowerWords(type.name)} ${words}`,
      testId: i === 0 ? `field-${type.name}-${record.param}` : `field-${type.name}-${record.param}-${field}`,
    };
  });
}

export const testIdOf = (type: DeclaredType, record: AnyRecord): string => `${kebab(type.name)}-${record.param}`;

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
