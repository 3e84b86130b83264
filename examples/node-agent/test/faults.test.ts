// What goes wrong, as the agent's users would meet it: the model provider
// overloaded (once: the SDK retries; for good: a friendly reply), and
// Slack rate-limiting the reply (the WebClient waits and retries).
//
// Written on "agentvcr/vitest": one proxy per worker, each test in its own
// scope (named after it, ended with its result, failing it on unused
// scripts, unscripted prompts or unknown Slack methods), and its own agent.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Control, ProgressEvent } from 'agentvcr';
import { createTest, expect } from 'agentvcr/vitest';
import { proxyConfig, replies, say, startAgent, turnDone } from './harness.js';

const assistant = { name: 'assistant', systemPrefix: 'You are a helpful assistant', tools: ['fetch_page'] };

const test = createTest({
  config: proxyConfig,
  fakeModel: true,
  mode: 'passthrough',
  dir: mkdtempSync(join(tmpdir(), 'node-agent-')),
}).extend('agent', async ({ proxy }, { onCleanup }) => {
  const agent = await startAgent(proxy.env); // a fresh agent per test, on the worker's proxy
  onCleanup(() => agent.close());
  return agent;
});

/** Records the progress events of one route while a test runs. */
async function watch(control: Control, route: string) {
  const seen: ProgressEvent[] = [];
  const sub = await control.onProgress((ev) => void (ev.route === route && seen.push(ev)));
  return { seen, [Symbol.asyncDispose]: () => sub.close(), errors: () => sub.errors() };
}

test('an overloaded model once: the SDK retries and the user gets the answer', async ({ vcr: { control }, agent }) => {
  const before = (await control.model.calls(assistant)).calls.length;
  await using _script = await control.model.respond(assistant, ['Here it is, after one retry.']);
  await control.rejectNextModelRequest({ retryAfterMs: 20 }); // 529 overloaded_error, Retry-After and retry-after-ms
  await using events = await watch(control, 'anthropic');

  const ts = await say(control.slack, agent.url, 'what is the status?');
  await turnDone(control.slack, ts);

  expect(await replies(control.slack, ts)).toEqual(['Here it is, after one retry.']);
  // Two requests reached the proxy: the first answered 529 by the fault, the SDK's retry by the scripted model.
  expect(events.seen.filter((e) => e.type === 'model_request')).toHaveLength(2);
  expect(events.seen.flatMap((e) => (e.type === 'response' ? [e.status] : []))).toEqual([529, 200]);
  expect((await control.model.calls(assistant)).calls).toHaveLength(before + 1); // the rejected one never reached the model
  expect(await control.faults()).toEqual([]);
  expect(events.errors()).toEqual([]);
});

test('a model overloaded past the SDK retries: the user gets a friendly reply, not silence', async ({ vcr: { control }, agent }) => {
  const before = (await control.model.calls(assistant)).calls.length;
  await control.rejectNextModelRequest({ retryAfterMs: 20, times: 3 }); // the first try and the SDK's 2 retries
  await using events = await watch(control, 'anthropic');

  const ts = await say(control.slack, agent.url, 'what is the status?');
  await turnDone(control.slack, ts);

  expect(await replies(control.slack, ts)).toEqual([
    'Sorry, the model is unavailable right now (529); I could not answer. Please try again in a few minutes.',
  ]);
  expect(events.seen.flatMap((e) => (e.type === 'response' ? [e.status] : []))).toEqual([529, 529, 529]);
  expect((await control.model.calls(assistant)).calls).toHaveLength(before); // none reached the model
  expect(await control.faults()).toEqual([]);
});

test('Slack rate-limits the reply: the WebClient waits Retry-After and the reply lands once', async ({ vcr: { control }, agent }) => {
  await using _script = await control.model.respond(assistant, ['Still here.']);
  await control.slack.rateLimit('chat.postMessage', 1000); // Retry-After: 1 (whole seconds)
  await using events = await watch(control, 'slack');

  const ts = await say(control.slack, agent.url, 'ping');
  await turnDone(control.slack, ts);

  expect(await replies(control.slack, ts)).toEqual(['Still here.']);
  const posts = (await control.slack.calls('chat.postMessage')).calls.filter((c) => c.params.thread_ts === ts);
  expect(posts).toHaveLength(2); // the one answered 429, then the retry
  expect(posts[1].params).toEqual(posts[0].params);
  expect(events.seen.flatMap((e) => (e.type === 'reply' ? [e.status] : []))).toEqual([429, 200]);
});
