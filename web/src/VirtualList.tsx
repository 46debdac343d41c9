/**
 * A list of records that renders what is on screen: up to `LONG` records
 * are all rendered; a longer list keeps only the rows near the viewport in
 * the DOM (@tanstack/react-virtual, against the window's scroll, rows
 * measured as they render since a form's height varies), and the rows it
 * is told to keep (a record being edited stays mounted wherever the page
 * is scrolled: its form, its focus, its text).
 */
import { defaultRangeExtractor, useWindowVirtualizer, type Range } from '@tanstack/react-virtual';
import { useCallback, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';

/** Lists this long or shorter are rendered whole. */
export const LONG = 60;

/** How a row of a long list is placed: the row's own element takes these. */
export interface VirtualRow {
  index: number;
  /** Its offset in the list, in pixels. */
  top: number;
  measure: (element: Element | null) => void;
}

/** The style and attributes a row's element takes to be placed (nothing for a row of a short list). */
export function rowProps(row: VirtualRow | undefined): { style?: { transform: string }; 'data-index'?: number; className: string } {
  return row ? { style: { transform: `translateY(${row.top}px)` }, 'data-index': row.index, className: 'virtual-row' } : { className: '' };
}

export interface VirtualListProps<T> {
  items: readonly T[];
  keyOf: (item: T) => string;
  /** A row, estimated `estimate` pixels high until measured. */
  estimate: number;
  render: (item: T, row?: VirtualRow) => ReactNode;
  /** The list's element: `ul` for a list, `div` for sections. */
  as: 'ul' | 'div';
  className: string;
  label?: string | undefined;
  testId?: string | undefined;
  /** Rows that stay mounted however far they are scrolled (records with an open form). */
  keep?: ((item: T) => boolean) | undefined;
}

export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, render, as: Tag, className, label, testId } = props;
  if (items.length <= LONG) {
    return (
      <Tag className={className} aria-label={label} data-testid={testId}>
        {items.map((item) => render(item))}
      </Tag>
    );
  }
  return <LongList {...props} />;
}

/** How far beyond the viewport a list still counts as near (and renders its rows). */
const NEAR = 800;

/**
 * Where the list starts on the page (the virtualizer's scroll margin), and
 * whether any of it is near the viewport: a long list far off screen renders
 * no rows at all, so a case of many long lists paints only what is seen.
 */
function useOffset(ref: React.RefObject<HTMLElement | null>): { offset: number; near: boolean } {
  const [offset, setOffset] = useState(0);
  const [near, setNear] = useState(false);
  useLayoutEffect(() => {
    let frame = 0;
    const measure = () => {
      frame = 0;
      const el = ref.current;
      if (!el) return;
      const rect = el.getBoundingClientRect();
      const top = Math.round(rect.top + window.scrollY);
      setOffset((was) => (Math.abs(was - top) > 1 ? top : was));
      setNear(rect.bottom > -NEAR && rect.top < window.innerHeight + NEAR);
    };
    const soon = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    measure();
    // what is above it may grow or shrink (a form opens, a list above measures its rows)
    const observer = new ResizeObserver(soon);
    observer.observe(document.body);
    window.addEventListener('scroll', soon, { passive: true });
    return () => {
      observer.disconnect();
      window.removeEventListener('scroll', soon);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [ref]);
  return { offset, near };
}

function LongList<T>({ items, keyOf, estimate, render, as: Tag, className, label, testId, keep }: VirtualListProps<T>) {
  const ref = useRef<HTMLElement>(null);
  const { offset, near } = useOffset(ref);
  const kept = useMemo(() => {
    const at: number[] = [];
    if (keep) items.forEach((item, i) => keep(item) && at.push(i));
    return at;
  }, [items, keep]);
  const rangeExtractor = useCallback(
    (range: Range) => (kept.length ? [...new Set([...defaultRangeExtractor(range), ...kept])].sort((a, b) => a - b) : defaultRangeExtractor(range)),
    [kept],
  );
  const virtualizer = useWindowVirtualizer({
    count: items.length,
    estimateSize: () => estimate,
    overscan: 6,
    scrollMargin: offset,
    getItemKey: (index) => keyOf(items[index]!),
    rangeExtractor,
  });
  const all = virtualizer.getVirtualItems();
  const rows = near ? all : all.filter((row) => kept.includes(row.index));
  return (
    <Tag
      // sound: the element is a ul or a div, an HTMLElement either way
      ref={ref as React.RefObject<HTMLUListElement & HTMLDivElement>}
      className={`${className} virtual-rows`}
      aria-label={label}
      data-testid={testId}
      data-virtual-count={items.length}
      style={{ height: virtualizer.getTotalSize() }}
    >
      {rows.map((row) => render(items[row.index]!, { index: row.index, top: row.start - offset, measure: virtualizer.measureElement }))}
    </Tag>
  );
}
