import { ConflictError, InvalidError, NotFoundError, type AnyRecord, type Case, type DeclaredType, type Fields } from '@baton/client';
import { useBaton } from '@baton/react';
import { useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useAnnounce } from './Announcer';
import { FieldControl } from './FieldControl';
import { message } from './format';
import { controlOf, fieldLabel, fieldOrder, lowerWords, textOfValue, valueOf } from './schemaText';

/** A new record's form as it opens: each field's default as text, empty where it has none (a checkbox unticked). */
export function startingDraft(type: DeclaredType): Record<string, string> {
  const draft: Record<string, string> = {};
  for (const name of fieldOrder(type)) {
    const schema = type.fields[name];
    draft[name] = schema?.default !== undefined ? textOfValue(schema.default) : schema?.type === 'boolean' ? 'false' : '';
  }
  return draft;
}

/** What a create sends: every required field, and each optional one that is not left empty. */
export function createFields(type: DeclaredType, draft: Record<string, string>): Fields {
  const fields: Fields = {};
  for (const [name, text] of Object.entries(draft)) {
    const required = type.required.includes(name);
    if (text === '' && !required) continue;
    fields[name] = valueOf(text, type.fields[name], required);
  }
  return fields;
}

/**
 * "Add <type in words>", with its parent: opens a form with the type's
 * fields (defaults filled in, required fields marked). Nothing exists until
 * "Save" sends the POST; a 422 shows at its field and the draft stays;
 * "Cancel" (or Escape) leaves nothing anywhere.
 */
export function AddRecord({ type, parent, parentName }: { type: DeclaredType; parent: AnyRecord | Case; parentName?: string | undefined }) {
  const baton = useBaton();
  const announce = useAnnounce();
  const [draft, setDraft] = useState<Record<string, string> | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const baseId = useId();
  const opener = useRef<HTMLButtonElement>(null);
  const firstInput = useRef<HTMLElement | null>(null);
  const thing = lowerWords(type.name);
  const where = parentName ? ` to ${parentName}` : '';

  function open(): void {
    setDraft(startingDraft(type));
    setError(null);
    setErrors({});
    requestAnimationFrame(() => firstInput.current?.focus());
  }

  function cancel(): void {
    setDraft(null);
    setError(null);
    setErrors({});
    requestAnimationFrame(() => opener.current?.focus());
  }

  async function save(event?: FormEvent): Promise<void> {
    event?.preventDefault();
    if (!draft || busy) return;
    setBusy(true);
    setError(null);
    setErrors({});
    try {
      const made = await baton.create(type.name, parent, createFields(type, draft));
      setDraft(null);
      announce(`${type.name === 'Case' ? 'Case' : `New ${thing}`} added`);
      requestAnimationFrame(() =>
        document.querySelector<HTMLElement>(`[data-testid="field-${made.type}-${made.param}"] [data-testid="field-input"]`)?.focus(),
      );
    } catch (e) {
      if (e instanceof InvalidError && e.fields.length > 0) {
        const byField: Record<string, string> = {};
        for (const f of e.fields) byField[f.field] ??= f.message;
        setErrors(byField);
        setError(`Not added: ${e.fields.length === 1 ? 'a field needs' : 'some fields need'} another value (marked below).`);
        requestAnimationFrame(() => document.getElementById(`${baseId}-field-${e.fields[0]!.field}`)?.focus());
      } else if (e instanceof NotFoundError) {
        setError(
          `Not added: the ${parent.type === 'Case' ? 'case' : lowerWords(parent.type)} it was to go in no longer exists (${message(e)}). Your entries are kept below: copy them before you close the form.`,
        );
      } else if (e instanceof ConflictError) {
        setError(`Not added: ${message(e)}`);
      } else {
        setError(`Not added: ${message(e)}`);
      }
    } finally {
      setBusy(false);
    }
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      cancel();
    }
  }

  if (!draft) {
    return (
      <p className="add-record">
        <button ref={opener} type="button" className="secondary" onClick={open} data-testid={`add-${type.name}`} aria-label={`Add ${thing}${where}`}>
          {`Add ${thing}`}
        </button>
      </p>
    );
  }

  const titleId = `${baseId}-heading`;
  const names = fieldOrder(type);
  return (
    <form className="create-form" aria-labelledby={titleId} data-testid={`create-${type.name}`} onSubmit={(e) => void save(e)} onKeyDown={onKeyDown} noValidate>
      <h3 id={titleId} className="record-title">{`New ${thing}${where}`}</h3>
      {names.some((n) => type.required.includes(n)) ? (
        <p className="muted">
          Fields marked <span aria-hidden="true">*</span>
          <span className="visually-hidden">required</span> are required.
        </p>
      ) : null}
      <div className="form-fields">
        {names.map((name, i) => {
          const schema = type.fields[name];
          const control = controlOf(schema);
          const required = type.required.includes(name);
          const id = `${baseId}-field-${name}`;
          const fieldError = errors[name];
          const hint = schema?.description;
          const describedBy = [fieldError ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
          return (
            <div key={name} className="form-field" data-testid={`create-field-${name}`} data-field={name}>
              <label className="form-label" htmlFor={id}>
                {fieldLabel(name, schema)}
                {required ? (
                  <span className="required">
                    <span aria-hidden="true"> *</span>
                    <span className="visually-hidden"> (required)</span>
                  </span>
                ) : null}
              </label>
              <FieldControl
                control={control}
                schema={schema}
                required={required}
                id={id}
                describedBy={describedBy}
                invalid={fieldError !== undefined}
                value={draft[name] ?? ''}
                editing
                onChange={(text) => {
                  setDraft((d) => (d ? { ...d, [name]: text } : d));
                  if (fieldError !== undefined) setErrors(({ [name]: _fixed, ...rest }) => rest);
                }}
                inputRef={
                  i === 0
                    ? (el) => {
                        firstInput.current = el;
                      }
                    : undefined
                }
              />
              {hint ? (
                <span className="muted field-hint" id={`${id}-hint`}>
                  {hint}
                </span>
              ) : null}
              {fieldError ? (
                <p className="error field-error" id={`${id}-error`} data-testid="field-error">
                  {fieldError}
                </p>
              ) : null}
            </div>
          );
        })}
      </div>
      <div className="field-bar">
        <button type="submit" disabled={busy} data-testid="create-save">
          Save
        </button>
        <button type="button" className="secondary" onClick={cancel} disabled={busy} data-testid="create-cancel">
          Cancel
        </button>
      </div>
      {error ? (
        <p className="error" role="alert" data-testid="add-error">
          {error}
        </p>
      ) : null}
    </form>
  );
}
