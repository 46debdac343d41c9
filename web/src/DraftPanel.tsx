import { useId, useRef, useState } from 'react';

export interface DraftPanelProps {
  label: string;
  text: string;
  busy: boolean;
  /** The tab may still write (not kicked or signed out): offer to save. */
  editable: boolean;
  /** Nobody holds the record now: the person may lock it again and carry on with their text. */
  canContinue: boolean;
  onSave: () => void;
  onContinue: () => void;
  onDiscard: () => void;
}

/** The unsaved text of a tab whose lock was taken over: kept, selectable and copyable. */
export function DraftPanel({ label, text, busy, editable, canContinue, onSave, onContinue, onDiscard }: DraftPanelProps) {
  const id = useId();
  const area = useRef<HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState(false);

  async function copy() {
    area.current?.select();
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // the text is selected: Ctrl+C copies it
      setCopied(false);
    }
  }

  return (
    <section className="draft-panel" aria-labelledby={id} data-testid="draft-panel">
      <h3 id={id}>Your unsaved text ({label})</h3>
      <textarea ref={area} readOnly rows={3} value={text} aria-label={`Your unsaved text for ${label}`} data-testid="draft-text" />
      <div className="field-bar">
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy my text'}
        </button>
        {editable ? (
          <button type="button" className="secondary" onClick={onSave} disabled={busy}>
            Save my text
          </button>
        ) : null}
        {canContinue ? (
          <button type="button" className="secondary" onClick={onContinue} disabled={busy}>
            Edit again with my text
          </button>
        ) : null}
        <button type="button" className="secondary" onClick={onDiscard}>
          Discard my text
        </button>
      </div>
    </section>
  );
}
