// src/openapi.ts and src/fixture-openapi.ts are generated from
// control/openapi.json and fixtureservice/openapi.json; this fails when a
// committed file is stale, and checks that the proxy and the fixture
// service serve the documents the types come from.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { document, documents, generate, output } from '../gen-openapi.mjs';
import { startFixtureService, startProxy } from '../src/index.js';
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

test('src/fixture-openapi.ts is what fixtureservice/openapi.json generates', async () => {
  const doc = (documents as { output: URL }[])[1]!;
  const committed = readFileSync(doc.output, 'utf8');
  if (committed !== ((await generate(doc)) as string)) {
    throw new Error('js/agentvcr/src/fixture-openapi.ts is stale: fixtureservice/openapi.json changed. Run `npm run gen -w agentvcr` and commit the result.');
  }
});

test('the fixture service serves the document the types come from', async () => {
  await using service = await startFixtureService();
  const res = await fetch(`${service.url}/v1/openapi.json`, { headers: { authorization: `Bearer ${service.token}` } });
  const doc = (documents as { document: URL }[])[1]!;
  expect(await res.json()).toEqual(JSON.parse(readFileSync(doc.document, 'utf8')));
});
