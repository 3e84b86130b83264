// Record, then replay, the agent's web tool: the first run reads a real
// page (a loopback origin) through a proxy in mode record; the second runs
// in mode replay with the origin gone, and the agent answers the same from
// the cassette. The model is scripted both times; Slack is the mock.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startProxy } from 'agentvcr';
import { proxyConfig, replies, say, startAgent, startPage, turnDone } from './harness.js';

const assistant = { name: 'assistant', systemPrefix: 'You are a helpful assistant', tools: ['fetch_page'] };
const dir = mkdtempSync(join(tmpdir(), 'node-agent-cassettes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One run of the agent against a proxy in mode over dir: the reply in the thread and what fetch_page returned. */
async function run(mode: 'record' | 'replay', url: string, origin: string) {
  await using proxy = await startProxy({ config: proxyConfig, fakeModel: true, mode, dir, allow: [origin] });
  await using agent = await startAgent(proxy.env);
  const { control } = proxy;
  await using _script = await control.model.respond(assistant, [
    { toolCalls: [{ name: 'fetch_page', input: { url } }], then: 'Checkout is degraded since 09:10.' },
  ]);
  const thread = await say(control.slack, agent.url, `what does ${url} say?`);
  await turnDone(control.slack, thread);
  const { calls, failures } = await control.model.calls(assistant);
  expect(failures).toEqual([]);
  return { reply: await replies(control.slack, thread), tool: calls[0]?.toolCalls?.[0], stats: await control.stats(), misses: await control.misses() };
}

test('the web tool replays from the cassette with the page gone', async () => {
  const page = await startPage('<h1>Incidents</h1><p>Checkout degraded since 09:10 UTC.</p>');
  const recorded = await run('record', page.url, page.origin);
  expect(recorded.reply).toEqual(['Checkout is degraded since 09:10.']);
  expect(recorded.tool).toMatchObject({ name: 'fetch_page', returned: true, result: 'Incidents Checkout degraded since 09:10 UTC.' });
  expect(recorded.stats).toMatchObject({ recorded: 1, replayed: 0, live: 0, faked: 2 });
  expect(page.hits).toHaveLength(1);
  expect(existsSync(join(dir, 'web.yaml'))).toBe(true); // written when the proxy closed

  await page.close(); // nothing answers at that origin now
  const replayed = await run('replay', page.url, page.origin);
  expect(replayed.reply).toEqual(recorded.reply);
  expect(replayed.tool).toMatchObject({ name: 'fetch_page', returned: true, result: recorded.tool?.result });
  expect(replayed.stats).toMatchObject({ replayed: 1, recorded: 0, missed: 0, live: 0 });
  expect(replayed.misses).toEqual([]);
  expect(page.hits).toHaveLength(1);
});
