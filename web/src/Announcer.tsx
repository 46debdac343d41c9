import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';

type Announce = (text: string) => void;

const AnnouncerContext = createContext<Announce>(() => {});

/**
 * One polite live region for lock notices ("Bob is editing card 2", "Alice
 * took over this card"), so screen readers hear them once, wherever they are.
 */
export function AnnouncerProvider({ children }: { children: ReactNode }) {
  const [text, setText] = useState('');
  const seq = useRef(0);
  const announce = useCallback<Announce>((next) => {
    seq.current++;
    // a repeated notice must change the region's text to be read again
    setText(seq.current % 2 ? next : `${next}\u00a0`);
  }, []);
  const value = useMemo(() => announce, [announce]);
  return (
    <AnnouncerContext.Provider value={value}>
      {children}
      <div className="visually-hidden" aria-live="polite" role="status" data-testid="announcer">
        {text}
      </div>
    </AnnouncerContext.Provider>
  );
}

export const useAnnounce = (): Announce => useContext(AnnouncerContext);
