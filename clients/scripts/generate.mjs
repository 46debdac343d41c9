// Writes core/src/generated/openapi.ts from the repo's openapi.json with
// openapi-typescript; `--check` compares instead of writing, and fails when
// the committed file is stale. operationIds are dropped first: the client
// uses only the schemas and paths, and does not depend on operation names.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const spec = fileURLToPath(new URL(process.env.BATON_OPENAPI ?? '../../openapi.json', import.meta.url));
const target = fileURLToPath(new URL('../core/src/generated/openapi.ts', import.meta.url));
const check = process.argv.includes('--check');

if (!existsSync(spec)) {
  console.error(`generate: ${spec} does not exist`);
  process.exit(1);
}
const document = JSON.parse(readFileSync(spec, 'utf8'));
for (const item of Object.values(document.paths ?? {})) {
  for (const operation of Object.values(item)) {
    if (operation && typeof operation === 'object') delete operation.operationId;
  }
}
const header =
  '// Generated from openapi.json by `npm run generate` (openapi-typescript). Do not edit.\n\n';
const output = header + astToString(await openapiTS(document));

if (check) {
  if (!existsSync(target) || readFileSync(target, 'utf8') !== output) {
    console.error('check:generated: core/src/generated/openapi.ts is stale; run `npm run generate` in clients/');
    process.exit(1);
  }
  console.log('check:generated: core/src/generated/openapi.ts matches openapi.json');
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, output);
  console.log(`generate: wrote ${target}`);
}
