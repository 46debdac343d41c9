/**
 * "Typed records from your own schema" (clients/README.md), as written: its
 * two commands against a baton serving examples/schemas/kanban.toml, then
 * its example type-checked with the generated types — and a colour the
 * schema does not declare must not compile.
 */
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { schemaServers } from '../../test/support.js';

const clients = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${clients}README.md`, 'utf8');
const section = readme.slice(readme.indexOf('## Typed records from your own schema'));
const commands = /```sh\n([\s\S]*?)```/.exec(section)![1]!.trim().split('\n');
const example = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
const scratch = fileURLToPath(new URL('./.tmp-typed/', import.meta.url));
const tsc = `${clients}node_modules/typescript/bin/tsc`;

/** Type-checks `code` (as src/usage.ts beside the generated src/baton-api.ts); the compiler's output, or '' when it passes. */
function typeCheck(code: string): string {
  writeFileSync(`${scratch}src/usage.ts`, code);
  try {
    execFileSync(process.execPath, [tsc, '-p', `${scratch}tsconfig.json`], { cwd: scratch, stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: Buffer }).stdout ?? error);
  }
}

describe.each(schemaServers('kanban').slice(0, 1))('typed records from the kanban schema ($backend)', (server) => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the two commands make the types, and the example compiles with them', () => {
    expect(commands).toHaveLength(2);
    mkdirSync(`${scratch}src`, { recursive: true });
    // the commands as written: the server's address and the scratch directory swapped in
    const [download, generate] = commands.map((c) =>
      c.replace('https://baton.example.com', server.baseUrl).replace('baton-openapi.json', `${scratch}baton-openapi.json`).replace('src/baton-api.ts', `${scratch}src/baton-api.ts`),
    ) as [string, string];
    execSync(download, { cwd: clients, stdio: 'pipe' });
    execSync(generate, { cwd: clients, stdio: 'pipe' });
    const generated = readFileSync(`${scratch}src/baton-api.ts`, 'utf8');
    expect(generated).toContain('"Case" | "Column" | "Card"');
    expect(generated).not.toContain('Edgenote');

    writeFileSync(
      `${scratch}tsconfig.json`,
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          lib: ['es2022', 'dom'],
          module: 'esnext',
          moduleResolution: 'bundler',
          skipLibCheck: true,
          types: [],
          paths: { '@baton/client': [`${clients}core/src/index.ts`] },
        },
        include: ['src'],
      }),
    );
    expect(typeCheck(example)).toBe('');
    // the types are the schema's: a colour it does not declare, or a type it does not have, is refused
    const purple = typeCheck(example.replace("color: 'red'", "color: 'purple'"));
    expect(purple).toMatch(/error TS\d+: .*purple/);
    const page = typeCheck(`${example}\nexport const page = () => baton.create('Page', { type: 'Case', param: '1', slug: 'x' }, {});\n`);
    expect(page).toMatch(/error TS\d+: .*"Page"/);
  }, 60_000);
});
