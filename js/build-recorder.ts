// Global setup of the repository's vitest suites: build cmd/recorder into
// js/.bin, where vitest.config.ts points AGENTVCR_BINARY, so that the
// suites run the code of this checkout. A cached build takes about a second.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const out = fileURLToPath(new URL('./.bin/recorder', import.meta.url));
  if (process.env.AGENTVCR_BINARY !== out) return; // the caller chose a binary
  execFileSync('go', ['build', '-o', out, './cmd/recorder'], { cwd: root, stdio: 'inherit' });
}
