#!/usr/bin/env node
// mcp-budget's launcher: runs the native binary of this machine's platform package
// (@mcp-budget/<os>-<cpu>[-musl], an optional dependency npm installs only where it fits), with
// the same arguments, standard streams and exit status. MCP_BUDGET_BINARY runs another binary.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    // glibc's version is in the process report; a musl libc leaves it out
    const report = process.report.getReport();
    return !(report.header && report.header.glibcVersionRuntime);
  } catch {
    return false;
  }
}

function platformPackage() {
  const libc = isMusl() ? '-musl' : '';
  return `@mcp-budget/${process.platform}-${process.arch}${libc}`;
}

function binary() {
  if (process.env.MCP_BUDGET_BINARY) return process.env.MCP_BUDGET_BINARY;
  const pkg = platformPackage();
  const exe = process.platform === 'win32' ? 'mcp-budget.exe' : 'mcp-budget';
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    process.stderr.write(
      `mcp-budget: no binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed ` +
        '(npm leaves out optional dependencies with --omit=optional or --no-optional; reinstall without it), ' +
        'or mcp-budget has no build for this platform (build it with `cargo install mcp-budget`)\n',
    );
    process.exit(1);
  }
}

const run = spawnSync(binary(), process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
if (run.error) {
  process.stderr.write(`mcp-budget: could not start ${path.basename(run.error.path || 'the binary')}: ${run.error.message}\n`);
  process.exit(1);
}
if (run.signal) {
  // the same end as the binary's: a signal is sent to this process too
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
