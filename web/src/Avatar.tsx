import { initials } from './format';

export interface AvatarProps {
  name: string;
  color: string;
  /** Open tabs, shown as text when more than one. */
  tabs?: number;
  size?: 'small' | 'normal';
  /** The name is written next to it already: keep assistive tech from reading it twice. */
  decorative?: boolean;
}

/** A person's colour and initials; the name is always there as text for assistive tech and tooltips. */
export function Avatar({ name, color, tabs, size = 'normal', decorative = false }: AvatarProps) {
  const label = tabs === undefined ? name : `${name}, ${tabs} ${tabs === 1 ? 'tab' : 'tabs'}`;
  return (
    <span className={`avatar avatar-${size}`} title={label} data-testid="avatar" data-name={name} aria-hidden={decorative || undefined}>
      <span className="avatar-circle" style={{ backgroundColor: color }} aria-hidden="true">
        {initials(name)}
      </span>
      {decorative ? null : <span className="visually-hidden">{label}</span>}
      {tabs !== undefined && tabs > 1 ? (
        <span className="avatar-tabs" aria-hidden="true">
          ×{tabs}
        </span>
      ) : null}
    </span>
  );
}
