import type { FieldSchema } from '@baton/client';
import type { KeyboardEvent, Ref } from 'react';
import type { Control } from './schemaText';

export interface FieldControlProps {
  control: Control;
  schema: FieldSchema | undefined;
  required: boolean;
  id: string;
  /** The accessible name: set when no visible <label> names the control. */
  ariaLabel?: string | undefined;
  describedBy?: string | undefined;
  invalid?: boolean;
  value: string;
  /** The form is open: the control takes input. Until then it is read-only and a click or a choice asks to edit. */
  editing: boolean;
  onChange: (text: string) => void;
  /** A click, or a choice, on the control while it is read-only. */
  onActivate?: () => void;
  onKeyDown?: (event: KeyboardEvent) => void;
  inputRef?: Ref<HTMLInputElement & HTMLTextAreaElement & HTMLSelectElement>;
}

/** The control a field's JSON Schema calls for (see `controlOf`), read-only until its form is open. */
export function FieldControl({
  control,
  schema,
  required,
  id,
  ariaLabel,
  describedBy,
  invalid = false,
  value,
  editing,
  onChange,
  onActivate,
  onKeyDown,
  inputRef,
}: FieldControlProps) {
  const common = {
    id,
    ref: inputRef,
    'aria-label': ariaLabel,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    'aria-required': required || undefined,
    'data-testid': 'field-input',
    onKeyDown,
  };
  const text = {
    ...common,
    value,
    readOnly: !editing,
    onChange: (e: { target: { value: string } }) => {
      if (editing) onChange(e.target.value);
    },
    onClick: () => {
      if (!editing) onActivate?.();
    },
  };
  switch (control) {
    case 'textarea':
      return <textarea rows={2} {...text} />;
    case 'select':
      return (
        <select
          {...common}
          value={value}
          // a select cannot be read-only: until the form is open, a choice only asks to edit
          aria-readonly={!editing || undefined}
          onChange={(e) => {
            if (editing) onChange(e.target.value);
          }}
          onMouseDown={(e) => {
            if (!editing) {
              e.preventDefault();
              onActivate?.();
            }
          }}
        >
          {value === '' || !required ? <option value="">—</option> : null}
          {(schema?.enum ?? []).map((v) => (
            <option key={String(v)} value={String(v)}>
              {String(v)}
            </option>
          ))}
        </select>
      );
    case 'checkbox':
      return (
        <input
          type="checkbox"
          {...common}
          checked={value === 'true'}
          aria-readonly={!editing || undefined}
          onClick={(e) => {
            if (!editing) {
              e.preventDefault();
              onActivate?.();
            }
          }}
          onChange={(e) => {
            if (editing) onChange(String(e.target.checked));
          }}
        />
      );
    case 'number':
      return <input type="number" min={schema?.minimum} max={schema?.maximum} step={schema?.type === 'integer' ? 1 : 'any'} {...text} />;
    case 'date':
      return <input type="date" {...text} />;
    case 'uri':
      return (
        <span className="uri-field">
          <input type="url" {...text} />
          {value ? (
            <a href={value} rel="noreferrer noopener" target="_blank" data-testid="field-link">
              Open
            </a>
          ) : null}
        </span>
      );
    case 'input':
      return <input type="text" {...text} />;
  }
}
