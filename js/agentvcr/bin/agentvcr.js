#!/usr/bin/env node
// `npx agentvcr ARGS...` runs the recorder binary (see resolveBinary) with
// ARGS, this process's standard input and output, its signals and its
// exit code, so that it stands in for the binary in scripts and terminals.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { resolveBinary } from '../dist/binary.js';

let binary;
try {
  binary = resolveBinary();
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}

// How signals reach recorder, as recorder eval passes them to its program:
// - On a terminal, recorder stays in the terminal's foreground process
//   group, so that Ctrl-C reaches it from the terminal, once (recorder
//   stops gracefully on a first SIGINT, at once on a second): SIGINT is
//   not passed on, SIGTERM and SIGHUP (sent to this process alone) are.
// - Elsewhere recorder gets a process group of its own and every signal
//   from this process, each once.
// - On Windows the console delivers Ctrl-C to recorder itself; there is
//   nothing to pass on, only to outlive recorder to report its exit code.
const windows = process.platform === 'win32';
const tty = Boolean(process.stdin.isTTY);
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', detached: !windows && !tty });

const forwarded = windows ? [] : tty ? ['SIGTERM', 'SIGHUP'] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
const handlers = new Map();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  const handler = forwarded.includes(signal) ? () => child.kill(signal) : () => {};
  handlers.set(signal, handler);
  process.on(signal, handler);
}

child.on('error', (err) => {
  console.error(`agentvcr: cannot run ${binary}: ${err.message}`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  if (signal) {
    // End as recorder ended, so that a shell sees the signal; should this
    // process survive it, exit as a shell reports one (128 + its number).
    for (const [name, handler] of handlers) process.off(name, handler);
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  process.exit(code ?? 1);
});
