#!/usr/bin/env node
// `npx agentvcr ARGS...` runs the recorder binary (see resolveBinary) with
// ARGS, this process's standard input and output, its signals and its
// exit code, so that it stands in for the binary in scripts and terminals.
import { execFileSync, spawn } from 'node:child_process';
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
//
// recorder keeps a process group of its own so that a signal to the whole
// group reaches it once, not twice (from the group, then from this
// process): a second SIGINT would cut its graceful stop short. The price:
// should this process die by SIGKILL, recorder would outlive it. For
// `proxy`, which never reads standard input, it gets a pipe for it and
// --exit-on-stdin-close (when the binary knows the flag): it stops, as on
// SIGTERM, when this process dies, however. Other commands (eval runs a
// program that may read this process's input) keep the input they had.
const windows = process.platform === 'win32';
const tty = Boolean(process.stdin.isTTY);
const args = process.argv.slice(2);
const watchStdin = args[0] === 'proxy' && !args.includes('--exit-on-stdin-close') && knowsStdinFlag(binary);
if (watchStdin) args.splice(1, 0, '--exit-on-stdin-close');
const child = spawn(binary, args, { stdio: [watchStdin ? 'pipe' : 'inherit', 'inherit', 'inherit'], detached: !windows && !tty });
child.stdin?.on('error', () => {}); // EPIPE once recorder has exited

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

/** knowsStdinFlag reports whether the binary's `proxy` takes --exit-on-stdin-close (an older one does not). */
function knowsStdinFlag(path) {
  try {
    return execFileSync(path, ['proxy', '-h'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5_000 }).includes('exit-on-stdin-close');
  } catch (err) {
    return String(err?.stdout ?? '').includes('exit-on-stdin-close');
  }
}
