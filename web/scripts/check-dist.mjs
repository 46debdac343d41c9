// Rebuilds the app and fails when web/dist differs from what is committed:
// the bundle baton embeds must be the one these sources build.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: web, stdio: 'inherit', ...opts });

run('npm', ['run', 'build']);
const untracked = execFileSync('git', ['ls-files', '--others', '--exclude-standard', '--', 'dist'], { cwd: web })
  .toString()
  .trim();
let stale = false;
try {
  run('git', ['diff', '--exit-code', '--stat', '--', 'dist']);
} catch {
  stale = true;
}
if (untracked) {
  console.error(`web/dist has files that are not committed:\n${untracked}`);
  stale = true;
}
if (stale) {
  console.error('web/dist is stale: run `npm run build` in web/ and commit web/dist.');
  process.exit(1);
}
console.log('web/dist matches the sources.');
