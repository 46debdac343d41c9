import { useId } from 'react';

export interface StaleChoiceProps {
  label: string;
  current: string;
  mine: string;
  version: number;
  busy: boolean;
  onKeepMine: () => void;
  onUseCurrent: () => void;
}

/** 412 stale_version: the current text beside mine, and a choice. */
export function StaleChoice({ label, current, mine, version, busy, onKeepMine, onUseCurrent }: StaleChoiceProps) {
  const id = useId();
  return (
    <section className="stale" aria-labelledby={id} data-testid="stale-choice">
      <h3 id={id}>{label} changed while you were editing</h3>
      <div className="stale-columns">
        <figure>
          <figcaption>Current text (version {version})</figcaption>
          <pre data-testid="stale-current">{current}</pre>
        </figure>
        <figure>
          <figcaption>Your text</figcaption>
          <pre data-testid="stale-mine">{mine}</pre>
        </figure>
      </div>
      <div className="field-bar">
        <button type="button" onClick={onKeepMine} disabled={busy}>
          Keep my text
        </button>
        <button type="button" className="secondary" onClick={onUseCurrent} disabled={busy}>
          Use the current text
        </button>
      </div>
    </section>
  );
}
