// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ComponentType } from 'react';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { caseFor, person, servers } from '../../test/support.js';

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
const example = /```tsx\n([\s\S]*?)```/.exec(readme)![1]!;
const scratch = join(import.meta.dirname, '.tmp') + '/';

describe.each(servers())('the React README example on $backend', (server) => {
  afterEach(cleanup);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('renders as written, in jsdom with its own WebSocket (address, token and slug swapped)', async () => {
    const alice = await person(server, 'Alice');
    const { kase } = await caseFor(server, alice, []);
    const code = example
      .replace("'https://baton.example.com'", JSON.stringify(server.baseUrl))
      .replace('"lighthouse"', JSON.stringify(kase.slug));
    expect(code).not.toMatch(/baton\.example\.com|"lighthouse"/);
    // what the app around the example provides: a saved token and a form
    const prelude = `const savedToken = ${JSON.stringify(alice.token)};
function CardForm(props: { card: { content: string }; onSave: (content: string) => unknown; onDone: () => unknown }) {
  return <button onClick={() => void props.onDone()}>{'editing ' + props.card.content}</button>;
}
`;
    mkdirSync(scratch, { recursive: true });
    const file = `${scratch}example-${server.backend}.tsx`;
    writeFileSync(file, prelude + code);
    const { App } = (await import(/* @vite-ignore */ file)) as { App: ComponentType };
    render(<App />);
    fireEvent.click(await screen.findByText('card 0'));
    fireEvent.click(await screen.findByText('editing card 0'));
    await screen.findByText('card 0');
    await waitFor(() => expect(document.body.textContent).toContain('live · Alice'));
  });
});
