import type { AnyRecord, Case, DeclaredType, FieldSchema } from '@baton/client';
import { useBaton } from '@baton/react';
import { useState } from 'react';
import { message } from './format';
import { lowerWords } from './schemaText';

/** A value a new record may start with, from the field's JSON Schema (null: leave it out). */
function starting(name: string, schema: FieldSchema, type: DeclaredType, taken: number): unknown {
  if (schema.default !== undefined) return null;
  if (schema.enum) return schema.enum[0] ?? null;
  if (schema.type === 'boolean') return false;
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 0;
  if (schema.format === 'date') return new Date().toISOString().slice(0, 10);
  if (schema.format === 'uri') return 'https://example.com/';
  const unique = type.unique.includes(name) ? `-${taken + 1}-${Math.random().toString(36).slice(2, 6)}` : '';
  const candidates = [`New ${lowerWords(type.name)}${unique}`, `new-${lowerWords(type.name).replace(/ /g, '-')}${unique}`];
  const fits = (text: string) => {
    try {
      return (!schema.pattern || new RegExp(schema.pattern, 'u').test(text)) && (schema.maxLength === undefined || text.length <= schema.maxLength);
    } catch {
      return true;
    }
  };
  return candidates.find(fits) ?? (schema.minLength ? 'x'.repeat(schema.minLength) : '');
}

/** What a new record starts with: every required field given a value its schema takes. */
export function startingFields(type: DeclaredType, taken: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of type.required) {
    const schema = type.fields[name];
    const value = schema ? starting(name, schema, type, taken) : null;
    if (value !== null) fields[name] = value;
  }
  return fields;
}

/** "Add <type in words>", with its parent: creates a record there (last), which opens live for everyone. */
export function AddRecord({ type, parent, count }: { type: DeclaredType; parent: AnyRecord | Case; count: number }) {
  const baton = useBaton();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function add(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      const made = await baton.create(type.name, parent, startingFields(type, count));
      requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-testid="field-${made.type}-${made.param}"] [data-testid="field-input"]`)?.focus());
    } catch (e) {
      setError(`Not added: ${message(e)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <p className="add-record">
      <button type="button" className="secondary" onClick={() => void add()} disabled={busy} data-testid={`add-${type.name}`}>
        {`Add ${lowerWords(type.name)}`}
      </button>
      {error ? (
        <span className="error" role="alert" data-testid="add-error">
          {error}
        </span>
      ) : null}
    </p>
  );
}
