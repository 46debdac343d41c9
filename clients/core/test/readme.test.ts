import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { caseFor, person, rest, servers } from '../../test/support.js';
import type { Card } from '../../test/support.js';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const example = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
const scratch = fileURLToPath(new URL('./.tmp/', import.meta.url));

describe.each(servers())('the README example on $backend', (server) => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('runs as written (address, credentials and slug swapped for the test server)', async () => {
    const alice = await person(server, 'Alice');
    const { kase, cards } = await caseFor(server, alice, []);
    const code = example
      .replace("'https://baton.example.com'", JSON.stringify(server.baseUrl))
      .replace("'alice@example.com', 'secret'", `${JSON.stringify(alice.email)}, ${JSON.stringify(alice.password)}`)
      .replace("'lighthouse'", JSON.stringify(kase.slug));
    expect(code).not.toMatch(/baton\.example\.com|'secret'|'lighthouse'/);
    // what the page around the example provides
    const prelude = `const render = (_: unknown) => {};\nconst alert = (m: string) => { throw new Error(m); };\n`;
    mkdirSync(scratch, { recursive: true });
    const file = `${scratch}example-${server.backend}.ts`;
    writeFileSync(file, `${prelude}${code}\nexport {};\n`);
    const globals = globalThis as { WebSocket?: unknown; sessionStorage?: unknown };
    globals.WebSocket = WebSocket;
    try {
      await import(/* @vite-ignore */ file);
    } finally {
      delete globals.WebSocket;
    }
    const saved = await rest<Card>(server, alice.token, 'GET', `/cards/${cards[0]!.param}`);
    expect(saved.data.content).toBe('New text');
    const status = await rest<{ state: string }>(server, alice.token, 'GET', `/locks/status?lockableType=Card&lockableParam=${cards[0]!.param}`);
    expect(status.data.state).toBe('unlocked');
  });
});
