// src/openapi.ts is generated from control/openapi.json; this fails when
// the committed file is stale, and checks that the proxy serves the same
// document the types come from.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { document, generate, output } from '../gen-openapi.mjs';
import { startProxy } from '../src/index.js';
import { tempDir } from './client-helpers.js';

test('src/openapi.ts is what control/openapi.json generates', async () => {
  const committed = readFileSync(output as URL, 'utf8');
  const fresh = (await generate()) as string;
  if (committed !== fresh) {
    throw new Error('js/agentvcr/src/openapi.ts is stale: control/openapi.json changed. Run `npm run gen -w agentvcr` and commit the result.');
  }
});

test('the proxy serves the document the types come from', async () => {
  await using proxy = await startProxy({ dir: tempDir(), fakeModel: true });
  const served = await proxy.control.openapi();
  expect(served).toEqual(JSON.parse(readFileSync(document as URL, 'utf8')));
});
