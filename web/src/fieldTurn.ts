/**
 * The fields of one record share its lock: starting to edit any of them
 * takes it. Which of them has the editor open is the record's "turn": one
 * field at a time; moving to another field of the record keeps the lock
 * (the field left saves what was typed), leaving the record releases it.
 */
import { createContext, useMemo, useRef, useState } from 'react';

export interface FieldTurn {
  /** The field whose editor is open, if any. */
  active: string | null;
  /** Whether `field` may open now (nobody's turn, or its own); takes the turn when free. */
  claim: (field: string) => boolean;
  /** The turn moves to `field`. */
  take: (field: string) => void;
  /** `field` is done. */
  release: (field: string) => void;
}

/** Null for a record of one field: nothing to share. */
export const FieldTurnContext = createContext<FieldTurn | null>(null);

export function useFieldTurn(): FieldTurn {
  const current = useRef<string | null>(null);
  const [active, setActive] = useState<string | null>(null);
  const set = (field: string | null) => {
    current.current = field;
    setActive(field);
  };
  // stable functions: the ref is read when they run
  const api = useMemo(
    () => ({
      claim: (field: string) => {
        if (current.current !== null && current.current !== field) return false;
        if (current.current === null) set(field);
        return true;
      },
      take: (field: string) => set(field),
      release: (field: string) => {
        if (current.current === field) set(null);
      },
    }),
    [],
  );
  return useMemo(() => ({ active, ...api }), [active, api]);
}
