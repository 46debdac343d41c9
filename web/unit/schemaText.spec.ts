/** How the app reads a schema (src/schemaText.ts): names, labels and the control each JSON Schema calls for. */
import { expect, test } from '@playwright/test';
import { Schema, type DeclaredType } from '@baton/client';
import { controlOf, fieldLabel, fieldOrder, kebab, lowerWords, numbering, recordName, valueOf, words } from '../src/schemaText';

const rules = { lease: null, takeover: 'editor', wait: true };
const declared = (name: string, parent: string, fields: DeclaredType['fields'], extra: Partial<DeclaredType> = {}): DeclaredType => ({
  name,
  plural: `${name.toLowerCase()}s`,
  table: `${name.toLowerCase()}s`,
  parent,
  store: 'baton',
  ordered: true,
  movable: false,
  label: null,
  bodyKey: name.charAt(0).toLowerCase() + name.slice(1),
  parentKey: parent === 'Case' ? 'caseId' : `${parent.toLowerCase()}Id`,
  nestKey: `${name.toLowerCase()}s`,
  fields,
  required: [],
  unique: [],
  lock: rules,
  ...extra,
});

test('names in words; a field is labelled by its title, else its name in words', () => {
  expect(words('BookComponent')).toBe('Book component');
  expect(words('dueOn')).toBe('Due on');
  expect(words('book_components')).toBe('Book components');
  expect(words('APIEndpoint')).toBe('API endpoint');
  expect(lowerWords('APIEndpoint')).toBe('API endpoint');
  expect(lowerWords('BookComponent')).toBe('book component');
  expect(kebab('APIEndpoint')).toBe('api-endpoint');
  expect(fieldLabel('dueOn', { type: 'string', format: 'date' })).toBe('Due on');
  expect(fieldLabel('dueOn', { type: 'string', title: 'Deadline' })).toBe('Deadline');
});

test('each JSON Schema gets its control', () => {
  expect(controlOf({ type: 'string' })).toBe('textarea');
  expect(controlOf({ type: 'string', maxLength: 201 })).toBe('textarea');
  expect(controlOf({ type: 'string', maxLength: 200 })).toBe('input');
  expect(controlOf({ enum: ['none', 'red'] })).toBe('select');
  expect(controlOf({ type: 'boolean' })).toBe('checkbox');
  expect(controlOf({ type: 'integer' })).toBe('number');
  expect(controlOf({ type: 'number' })).toBe('number');
  expect(controlOf({ type: 'string', format: 'date' })).toBe('date');
  expect(controlOf({ type: 'string', format: 'uri' })).toBe('uri');
});

test('what a save sends for the text of each control', () => {
  expect(valueOf('3', { type: 'integer' }, false)).toBe(3);
  expect(valueOf('', { type: 'integer' }, false)).toBeNull();
  expect(valueOf('true', { type: 'boolean' }, false)).toBe(true);
  expect(valueOf('', { type: 'string', format: 'date' }, false)).toBeNull();
  expect(valueOf('', { type: 'string' }, true)).toBe('');
  expect(valueOf('red', { enum: ['none', 'red'] }, false)).toBe('red');
});

test('records are headed by their label, else a unique field, else their number in the case; the label field comes first', () => {
  const note = declared('Edgenote', 'Case', { slug: { type: 'string' }, caption: { type: 'string' } }, { unique: ['slug'], label: 'caption' });
  const base = { type: 'Edgenote', table: 'edgenotes', param: '4', id: 4, caseId: 1, version: 1 };
  expect(recordName(note, { ...base, slug: 'chart', caption: 'Harbour chart' }, 1)).toBe('Harbour chart');
  // no label yet: the unique field names it
  expect(recordName(note, { ...base, slug: 'chart', caption: '' }, 1)).toBe('Edgenote chart');
  const recipe = declared('Recipe', 'Case', { title: { type: 'string', maxLength: 120 }, serves: { type: 'integer' } }, { label: 'title' });
  expect(recordName(recipe, { ...base, type: 'Recipe', title: 'Smoky bean chili' }, 3)).toBe('Smoky bean chili');
  // a record that is its text alone (the casebook's card) is named by its number, whatever its label
  const textCard = declared('Card', 'Page', { content: { type: 'string' } }, { label: 'content' });
  expect(recordName(textCard, { ...base, type: 'Card', content: 'A long text.' }, 2)).toBe('Card 2');
  expect(fieldOrder(note)).toEqual(['caption', 'slug']);
  const column = declared('Column', 'Case', { title: { type: 'string' } });
  const card = declared('Card', 'Column', { content: { type: 'string' } });
  const schema = new Schema({ types: [column, card] });
  const rec = (type: string, id: number, extra: object = {}) => ({ type, table: '', param: String(id), id, caseId: 1, version: 1, ...extra });
  const numbers = numbering(
    schema,
    {
      'Case/1': { Column: [rec('Column', 7), rec('Column', 3)] },
      'Column/7': { Card: [rec('Card', 20), rec('Card', 10)] },
      'Column/3': { Card: [rec('Card', 5)] },
    },
    'Case/1',
  );
  expect([numbers.get('Column/7'), numbers.get('Column/3')]).toEqual([1, 2]);
  expect([numbers.get('Card/20'), numbers.get('Card/10'), numbers.get('Card/5')]).toEqual([1, 2, 3]);
  expect(recordName(card, rec('Card', 5), 3)).toBe('Card 3');
});
