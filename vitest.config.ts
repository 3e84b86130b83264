// The vitest suites of the npm side: the agentvcr package and the Node
// example agent. `npm test` runs them (see docs/typescript.md).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The suites run this repository's recorder, built by the global setup,
// where a user's tests run the one their platform package carries.
const binary = fileURLToPath(new URL('./js/.bin/recorder', import.meta.url));
process.env.AGENTVCR_BINARY ??= binary;

export default defineConfig({
  test: {
    globalSetup: ['js/build-recorder.ts'],
    projects: ['js/agentvcr', 'examples/node-agent'],
  },
});
