/**
 * What the app reads from the schema in force (`GET /schema`): how a type,
 * a field and a record are named for people, and which control edits a
 * field. Pure functions; the app names no record type of its own.
 */
import type { AnyRecord, DeclaredType, FieldSchema, Lockable, Schema } from '@baton/client';

/** `BookComponent` → `Book component`, `dueOn` → `Due on`, `due_on` → `Due on`. */
export function words(name: string): string {
  const spaced = name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim()
    .toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** A type in running text: `BookComponent` → `book component`; the case is `case`. */
export const lowerWords = (type: string): string => words(type).toLowerCase();

/** A field's label: its JSON Schema `title`, else its name in words. */
export const fieldLabel = (name: string, schema: FieldSchema | undefined): string => schema?.title ?? words(name);

/** How a field is edited. */
export type Control = 'textarea' | 'input' | 'select' | 'checkbox' | 'number' | 'date' | 'uri';

/**
 * The control a field's JSON Schema calls for: an enum a select, a boolean
 * a checkbox, numbers a number input, a date a date input, a uri an input
 * with a link beside it; a string with no `maxLength` or one over 200 a
 * text area, any other string an input.
 */
export function controlOf(schema: FieldSchema | undefined): Control {
  if (!schema) return 'input';
  if (schema.enum) return 'select';
  if (schema.type === 'boolean') return 'checkbox';
  if (schema.type === 'integer' || schema.type === 'number') return 'number';
  if (schema.format === 'date') return 'date';
  if (schema.format === 'uri') return 'uri';
  return schema.maxLength === undefined || schema.maxLength > 200 ? 'textarea' : 'input';
}

/** The value a save sends for what the person typed or chose (`''` is null where the field may be left out). */
export function valueOf(text: string, schema: FieldSchema | undefined, required: boolean): unknown {
  if (!schema) return text;
  if (schema.type === 'boolean') return text === 'true';
  if (schema.enum) return schema.enum.find((v) => String(v) === text) ?? text;
  if (text === '' && !required && schema.type !== 'string') return null;
  if (schema.type === 'integer' || schema.type === 'number') return text === '' ? null : Number(text);
  if (text === '' && !required && schema.format) return null;
  return text;
}

/** A field's value as the app's text (a draft is text): `null` is empty, `true` is `true`. */
export function textOfValue(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/** The fields a record shows, its label field first, then the others in declaration order. */
export function fieldOrder(type: DeclaredType): string[] {
  const names = Object.keys(type.fields);
  const label = type.label && names.includes(type.label) ? type.label : null;
  return label ? [label, ...names.filter((n) => n !== label)] : names;
}

/** A record's value of its label field, if its type has one and it is set. */
export function labelOf(type: DeclaredType | undefined, record: AnyRecord): string | null {
  const value = type?.label ? record[type.label] : null;
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/**
 * What people call a record in names and notices: `Edgenote chart` for a
 * type with a unique field (its value identifies it in the case), else the
 * type and its number in the case (`Card 2`, `Column 1`).
 */
export function recordName(type: DeclaredType, record: AnyRecord, number: number): string {
  const key = type.unique[0];
  const value = key ? record[key] : undefined;
  return typeof value === 'string' && value !== '' ? `${words(type.name)} ${value}` : `${words(type.name)} ${number}`;
}

/**
 * Each record's number among the records of its type, in the order the case
 * shows them (parents first, each parent's children in order).
 */
export function numbering(schema: Schema, children: Record<string, Record<string, AnyRecord[] | undefined>>, caseKey: string): Map<string, number> {
  const numbers = new Map<string, number>();
  const counts = new Map<string, number>();
  const visit = (parentKey: string, parentType: string) => {
    for (const type of schema.childrenOf(parentType)) {
      for (const record of children[parentKey]?.[type.name] ?? []) {
        const n = (counts.get(type.name) ?? 0) + 1;
        counts.set(type.name, n);
        numbers.set(`${type.name}/${record.param}`, n);
      }
    }
    for (const type of schema.childrenOf(parentType)) {
      for (const record of children[parentKey]?.[type.name] ?? []) visit(`${type.name}/${record.param}`, type.name);
    }
  };
  visit(caseKey, 'Case');
  return numbers;
}

/** `BookComponent` → `book-component`: test ids and class names. */
export const kebab = (type: string): string => lowerWords(type).replace(/ /g, '-');

/** The schema's type of a lockable; undefined for a case. */
export const typeOf = (schema: Schema | null, record: Lockable): DeclaredType | undefined => schema?.type(record.type);
