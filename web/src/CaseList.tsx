import type { Case } from '@baton/client';
import { useBaton } from '@baton/react';
import { useEffect, useState } from 'react';
import { message } from './format';
import { href } from './router';

export function CaseList() {
  const baton = useBaton();
  const [cases, setCases] = useState<Case[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    baton.api.cases().then(
      (list) => live && setCases(list),
      (e) => live && setError(message(e)),
    );
    return () => {
      live = false;
    };
  }, [baton]);

  return (
    <section aria-labelledby="cases-title">
      <h1 id="cases-title">My cases</h1>
      {error ? <p role="alert">{error}</p> : null}
      {cases === null && !error ? <p>Loading…</p> : null}
      {cases?.length === 0 ? <p>You are not a member of any case yet.</p> : null}
      <ul className="case-list" data-testid="case-list">
        {cases?.map((c) => (
          <li key={c.param}>
            <a href={href({ name: 'case', slug: c.slug })}>{c.title}</a> <span className="muted">{c.slug}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
