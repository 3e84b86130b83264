// The Slack mock through the control client: seed, what the agent posted,
// queued errors and rate limits, unknown methods failing the scope.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ScopeFailedError, startProxy } from '../src/index.js';
import type { Proxy } from '../src/index.js';
import { send, tempDir, via } from './client-helpers.js';
import type { ProxyAgent } from 'undici';

let proxy: Proxy;
let d: ProxyAgent;
beforeAll(async () => {
  proxy = await startProxy({ dir: tempDir(), caDir: tempDir('agentvcr-ca-'), mode: 'mock' });
  d = via(proxy);
});
afterAll(async () => {
  await d.close();
  await proxy.close();
});

const slack = (method: string, body: Record<string, unknown>) =>
  send(d, `https://slack.com/api/${method}`, {
    headers: { authorization: 'Bearer xoxb-0000000000-0000000000000-abcdefabcdefabcdefabcdef' },
    body,
  });

test('seed, post, read back the channel and the calls', async () => {
  const seeded = await proxy.control.slack.seed({
    users: [{ id: 'U0ALICE001', name: 'alice' }],
    channels: [{ id: 'C0EVAL0001', name: 'eval' }],
    messages: [{ channel: 'C0EVAL0001', ts: '1790000000.000100', user: 'U0ALICE001', text: 'is the deploy out?' }],
  });
  expect(seeded.messages).toEqual([{ ts: '1790000000.000100', user: 'U0ALICE001', text: 'is the deploy out?' }]);
  const posted = await slack('chat.postMessage', { channel: 'C0EVAL0001', thread_ts: '1790000000.000100', text: 'Yes, at 14:02.' });
  expect(posted.json()).toMatchObject({ ok: true, channel: 'C0EVAL0001' });
  const messages = await proxy.control.slack.messages('C0EVAL0001');
  expect(messages.map((m) => m.text)).toEqual(['is the deploy out?', 'Yes, at 14:02.']);
  expect(messages[1]!.thread_ts).toBe('1790000000.000100');
  const calls = await proxy.control.slack.calls('chat.postMessage');
  expect(calls.calls).toHaveLength(1);
  expect(calls.calls[0]!.params).toMatchObject({ channel: 'C0EVAL0001', text: 'Yes, at 14:02.' });
  expect(calls.calls[0]!.params.token).toBeUndefined();
  expect(calls.unknown).toEqual([]);
});

test('a queued error answers the next call as Slack would; rateLimit answers 429 with Retry-After', async () => {
  await proxy.control.slack.error('chat.postMessage', 'missing_scope', { extra: { needed: 'chat:write' } });
  const denied = await slack('chat.postMessage', { channel: 'C0EVAL0001', text: 'x' });
  expect(denied.status).toBe(200);
  expect(denied.json()).toMatchObject({ ok: false, error: 'missing_scope', needed: 'chat:write' });
  await proxy.control.slack.rateLimit('chat.postMessage', 3_000);
  const limited = await slack('chat.postMessage', { channel: 'C0EVAL0001', text: 'x' });
  expect(limited.status).toBe(429);
  expect(limited.headers['retry-after']).toBe('3');
  expect((await slack('chat.postMessage', { channel: 'C0EVAL0001', text: 'x' })).json().ok).toBe(true);
});

test('an unknown method is listed and fails the scope', async () => {
  await proxy.control.beginScope('unknown slack');
  const got = await slack('chat.scheduleTeleport', { channel: 'C0EVAL0001' });
  expect(got.json()).toMatchObject({ ok: false, error: 'unknown_method' });
  expect((await proxy.control.slack.calls()).unknown).toContain('chat.scheduleTeleport');
  const err = (await proxy.control.endScope('unknown slack', true).catch((e: unknown) => e)) as ScopeFailedError;
  expect(err).toBeInstanceOf(ScopeFailedError);
  expect(err.unknownSlack).toEqual(['chat.scheduleTeleport']);
  expect(err.message).toContain('Slack methods the mock does not know');
});
