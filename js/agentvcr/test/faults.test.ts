// Faults: a rejected model request gives the client the provider's status,
// the queue lists and clears, a cut stream ends early, a stalled one shows
// in flight.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { startProxy } from '../src/index.js';
import type { Proxy } from '../src/index.js';
import { anthropic, tempDir, via } from './client-helpers.js';
import type { ProxyAgent } from 'undici';

let proxy: Proxy;
let d: ProxyAgent;
beforeAll(async () => {
  proxy = await startProxy({ dir: tempDir(), caDir: tempDir('agentvcr-ca-'), fakeModel: true });
  d = via(proxy);
});
afterAll(async () => {
  await d.close();
  await proxy.close();
});
beforeEach(async () => {
  await proxy.control.clearFaults();
  await proxy.control.model.reset();
});

test('rejectNextModelRequest gives the client the status and Retry-After, once', async () => {
  await proxy.control.model.respond('support', ['after the retry']);
  const id = await proxy.control.rejectNextModelRequest({ status: 429, retryAfterMs: 2_000 });
  expect(await proxy.control.faults()).toMatchObject([{ id, kind: 'reject_model_request', status: 429, retryAfterMs: 2_000 }]);
  const rejected = await anthropic(d, { messages: [{ role: 'user', content: 'hi' }] });
  expect(rejected.status).toBe(429);
  expect(rejected.headers['retry-after']).toBe('2');
  expect(rejected.headers['x-agentvcr']).toBe('fault');
  expect(rejected.json().error.type).toBe('rate_limit_error');
  expect(await proxy.control.faults()).toEqual([]);
  const ok = await anthropic(d, { messages: [{ role: 'user', content: 'hi' }] });
  expect(ok.json().content[0].text).toBe('after the retry');
});

test('the default rejection is Anthropic\'s 529 overloaded; clearFaults empties the queue', async () => {
  await proxy.control.rejectNextModelRequest();
  const got = await anthropic(d, { messages: [{ role: 'user', content: 'hi' }] });
  expect(got.status).toBe(529);
  expect(got.json().error.type).toBe('overloaded_error');
  await proxy.control.addFault({ kind: 'latency', delayMs: 10, times: -1 });
  await proxy.control.cutStream({ after: 1, route: 'anthropic' });
  expect((await proxy.control.faults()).map((f) => f.kind)).toEqual(['latency', 'cut_stream']);
  await proxy.control.clearFaults();
  expect(await proxy.control.faults()).toEqual([]);
});

test('a cut stream ends before message_stop; a stalled one is in flight until it goes on', async () => {
  await proxy.control.model.respond('support', ['a long streamed answer', 'stalled answer']);
  await proxy.control.cutStream({ after: 2 });
  const cut = await anthropic(d, { stream: true, messages: [{ role: 'user', content: 'stream it' }] }).catch((e: Error) => e);
  // The proxy ends the response with an error: either the body is short or the read fails.
  if (!(cut instanceof Error)) {
    expect(cut.text).toContain('message_start');
    expect(cut.text).not.toContain('message_stop');
  }

  await proxy.control.stallStream({ after: 1, delayMs: 1500 });
  const stream = proxy.control.events();
  await stream.ready;
  const pending = anthropic(d, { stream: true, messages: [{ role: 'user', content: 'stall it' }] });
  for await (const ev of stream) if (ev.type === 'response') break;
  await expect(proxy.control.waitIdle({ timeoutMs: 100 })).rejects.toThrow(/still in flight/);
  const stalled = await pending;
  expect(stalled.text).toContain('message_stop');
  await proxy.control.waitIdle();
});
