import type { OnlineUser } from '@baton/client';
import { Avatar } from './Avatar';

/** Who has the case open, with their number of tabs. */
export function AvatarStack({ online }: { online: OnlineUser[] }) {
  return (
    <section className="avatar-stack" aria-label="People here now" data-testid="avatar-stack">
      <ul>
        {online.map((o) => (
          <li key={o.user.param}>
            <Avatar name={o.user.name} color={o.color || o.user.color} tabs={o.sessions} />
          </li>
        ))}
      </ul>
      <span className="muted">{online.length === 1 ? '1 person here' : `${online.length} people here`}</span>
    </section>
  );
}
