/**
 * What the app reads from the schema in force (`GET /schema`): how a type,
 * a field and a record are named for people, and which control edits a
 * field. Pure functions; the app names no record type of its own.
 */
import type { AnyRecord, DeclaredType, FieldSchema, Lockable, Schema } from '@baton/client';

/** A name's words: `BookComponent` → Book, Component; `APIEndpoint` → API, Endpoint; `due_on` → due, on. */
function nameParts(name: string): string[] {
  return name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
}

/** An acronym keeps its capitals in running text (`API`). */
const inText = (word: string): string => (word.length > 1 && /^[A-Z0-9]+$/.test(word) && /[A-Z]/.test(word) ? word : word.toLowerCase());

/** `BookComponent` → `Book component`, `APIEndpoint` → `API endpoint`, `dueOn` → `Due on`, `due_on` → `Due on`. */
export function words(name: string): string {
  const text = nameParts(name).map(inText).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A type in running text: `BookComponent` → `book component`, `APIEndpoint` → `API endpoint`; the case is `case`. */
export const lowerWords = (type: string): string => nameParts(type).map(inText).join(' ');

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
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'undefined':
      return '';
    default:
      // null is empty; a field whose JSON Schema allows an object or a list shows it as JSON
      return value === null ? '' : (JSON.stringify(value) ?? '');
  }
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

/** A type whose only field is a text area (the casebook's card): its records are their text, named "Card 2". */
export function isTextOnly(type: DeclaredType): boolean {
  const names = Object.keys(type.fields);
  return names.length === 1 && controlOf(type.fields[names[0]!]) === 'textarea';
}

/**
 * What people call a record in headings, names and notices: its label (the
 * type's `label` field, "Smoky bean chili"); without one, `Edgenote chart`
 * for a type with a unique field, else the type and its number in the case
 * (`Card 2`). A record that is its text alone (the casebook's card) is
 * named by number: its text is what it shows.
 */
export function recordName(type: DeclaredType, record: AnyRecord, number: number): string {
  const label = isTextOnly(type) ? null : labelOf(type, record);
  if (label) return label.trim();
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
export const kebab = (type: string): string => lowerWords(type).toLowerCase().replace(/ /g, '-');

/** The schema's type of a lockable; undefined for a case. */
export const typeOf = (schema: Schema | null, record: Lockable): DeclaredType | undefined => schema?.type(record.type);
