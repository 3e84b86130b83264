// A wiring test in Guren's style: the model's answers are scripted (the
// proxy's scripted model), everything else is real: the agent's Slack
// route, its fetch_page tool reading a page, its reply through the Slack
// WebClient into the proxy's Slack mock.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startProxy, type Proxy } from 'agentvcr';
import { envelope, postSigned, proxyConfig, replies, say, SLACK, startAgent, startPage, turnDone, type AgentProcess, type Page } from './harness.js';

const assistant = { name: 'assistant', systemPrefix: 'You are a helpful assistant', tools: ['fetch_page'] };

let page: Page;
let proxy: Proxy;
let agent: AgentProcess;

beforeAll(async () => {
  page = await startPage('<html><body><h1>Status</h1><p>The deploy went out at 14:02.</p><script>x()</script></body></html>');
  // passthrough: the page is the test's own, nothing is recorded.
  proxy = await startProxy({ config: proxyConfig, fakeModel: true, mode: 'passthrough', allow: [page.origin], dir: mkdtempSync(join(tmpdir(), 'node-agent-')) });
  agent = await startAgent(proxy.env);
});

afterAll(async () => {
  await agent?.close();
  await proxy?.close();
  await page?.close();
});

test('the agent reads the page with fetch_page and answers in the thread', async () => {
  const { control } = proxy;
  await using _script = await control.model.respond(assistant, [
    { toolCalls: [{ name: 'fetch_page', input: { url: page.url } }], then: 'The deploy went out at 14:02.' },
  ]);

  const thread = await say(control.slack, agent.url, 'when did the deploy go out? see the status page');
  await turnDone(control.slack, thread);

  // What people see: one reply in the thread, and the "thinking" reaction came and went.
  expect(await replies(control.slack, thread)).toEqual(['The deploy went out at 14:02.']);
  expect((await control.slack.calls('reactions.add')).calls.map((c) => c.params)).toContainEqual(
    expect.objectContaining({ channel: SLACK.channel, timestamp: thread, name: 'eyes' }),
  );

  // What the model was asked, and what the real tool returned to it.
  const { calls, failures } = await control.model.calls(assistant);
  expect(failures).toEqual([]);
  expect(calls).toHaveLength(2);
  expect(calls[0].prompt.messages.at(-1)?.text).toContain('when did the deploy go out?');
  expect(calls[0].toolCalls).toEqual([
    expect.objectContaining({ name: 'fetch_page', input: { url: page.url }, returned: true, result: 'Status The deploy went out at 14:02.' }),
  ]);
  expect(calls[1].prompt.results).toEqual([expect.objectContaining({ content: 'Status The deploy went out at 14:02.' })]);

  // The page was read once, through the proxy, by the agent's tool.
  expect(page.hits).toEqual(['node-agent/0.1 (fetch_page)']);
  expect(await control.stats()).toMatchObject({ faked: 2, passthrough: 1, refused: 0 });
  expect(agent.log()).not.toContain('went around the proxy'); // node-proxy.cjs says so for any connection that did
});

test('the Slack route refuses a request whose signature does not match, and answers url_verification', async () => {
  const res = await postSigned(agent.url, envelope({ type: 'app_mention', user: SLACK.user, text: 'hi', channel: SLACK.channel, ts: '1.000001' }), 'not-the-secret');
  expect(res.status).toBe(401);
  const verify = await postSigned(agent.url, JSON.stringify({ type: 'url_verification', challenge: 'c-123' }));
  expect(await verify.json()).toEqual({ challenge: 'c-123' });
});
