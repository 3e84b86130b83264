// Global setup of the repository's vitest suites: build cmd/recorder into
// js/.bin, where vitest.config.ts points AGENTVCR_BINARY, so that the
// suites run the code of this checkout, and the reference agent
// (examples/agent) beside it, for the fixture's tests to run as a process.
// A cached build takes about a second.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const out = fileURLToPath(new URL('./.bin/recorder', import.meta.url));
  execFileSync('go', ['build', '-o', fileURLToPath(new URL('./.bin/agent', import.meta.url)), './examples/agent'], { cwd: root, stdio: 'inherit' });
  if (process.env.AGENTVCR_BINARY !== out) return; // the caller chose a binary
  execFileSync('go', ['build', '-o', out, './cmd/recorder'], { cwd: root, stdio: 'inherit' });
}
