// Steering mid-turn: while the agent's first model request is held at the
// proxy, the user writes again in the thread; the agent adds that message
// to the turn's next model request, and the one reply follows it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startProxy, type Proxy } from 'agentvcr';
import { proxyConfig, replies, say, startAgent, startPage, turnDone, type AgentProcess, type Page } from './harness.js';

const assistant = { name: 'assistant', systemPrefix: 'You are a helpful assistant', tools: ['fetch_page'] };
const steer = 'actually, just give me the time, in French';

let page: Page;
let proxy: Proxy;
let agent: AgentProcess;

beforeAll(async () => {
  page = await startPage('<p>The deploy went out at 14:02.</p>');
  proxy = await startProxy({ config: proxyConfig, fakeModel: true, mode: 'passthrough', allow: [page.origin], dir: mkdtempSync(join(tmpdir(), 'node-agent-')) });
  agent = await startAgent(proxy.env);
});

afterAll(async () => {
  await agent?.close();
  await proxy?.close();
  await page?.close();
});

test('a message posted while the first model request is held steers the turn', async () => {
  const { control } = proxy;
  await using _script = await control.model.respond(assistant, [
    { toolCalls: [{ name: 'fetch_page', input: { url: page.url } }], then: 'À 14 h 02.' },
  ]);

  // The thread's ts is known once the mention is posted; the held request may come first.
  let threadKnown!: (ts: string) => void;
  const thread = new Promise<string>((resolve) => (threadKnown = resolve));
  const held: number[] = [];
  await using sub = await control.onProgress(
    async (ev, { send }) => {
      if (ev.type !== 'model_request') return;
      held.push(ev.id);
      if (held.length === 1) await send(steer); // the request waits until this settles
    },
    { hold: ['model_request'], holdTimeoutMs: 10_000, send: async (text) => void (await say(control.slack, agent.url, String(text), { thread: await thread })) },
  );

  const ts = await say(control.slack, agent.url, 'when did the deploy go out? see the status page');
  threadKnown(ts);
  await turnDone(control.slack, ts);

  // The first request went before the steering message; the second carried it, after the tool's result.
  const { calls, failures } = await control.model.calls(assistant);
  expect(failures).toEqual([]);
  expect(calls).toHaveLength(2);
  expect(JSON.stringify(calls[0].prompt.messages)).not.toContain(steer);
  expect(calls[1].prompt.results).toEqual([expect.objectContaining({ content: 'The deploy went out at 14:02.' })]);
  expect(calls[1].prompt.messages.at(-1)?.text).toContain(steer);
  await control.model.assertPrompted(assistant, steer);

  // One reply, the steered one (the steering message did not start a turn of its own).
  expect(await replies(control.slack, ts)).toEqual(['À 14 h 02.']);
  expect((await control.slack.calls('chat.postMessage')).calls).toHaveLength(1);
  expect(held).toHaveLength(2);
  await sub.close();
  expect(sub.errors()).toEqual([]);
});
