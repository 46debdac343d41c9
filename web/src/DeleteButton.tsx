import type { AnyRecord } from '@baton/client';
import { useBaton } from '@baton/react';
import { useState } from 'react';
import { message } from './format';

/** "Delete", then "Delete it" / "Keep it": deletes the record and everything under it (guarded like a save). */
export function DeleteButton({ record, label, disabled }: { record: AnyRecord; label: string; disabled: boolean }) {
  const baton = useBaton();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function remove(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await baton.destroy(record);
    } catch (e) {
      setError(`Not deleted: ${message(e)}`);
      setAsking(false);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      {asking ? (
        <>
          <button type="button" className="danger" onClick={() => void remove()} disabled={busy} aria-label={`Delete ${label} and everything in it`}>
            Delete it
          </button>
          <button type="button" className="secondary" onClick={() => setAsking(false)} disabled={busy}>
            Keep it
          </button>
        </>
      ) : (
        <button type="button" className="secondary" onClick={() => setAsking(true)} disabled={disabled || busy} aria-label={`Delete ${label}`}>
          Delete
        </button>
      )}
      {error ? (
        <span className="error" role="alert" data-testid="delete-error">
          {error}
        </span>
      ) : null}
    </>
  );
}
