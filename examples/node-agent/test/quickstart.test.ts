// The README's "A vitest test in 30 seconds", as it is printed there (the
// lines between the markers): if this test breaks, so does the README.
import { replies, say, startAgent } from './harness.js';
// README begin
import { createTest, expect } from 'agentvcr/vitest';
const test = createTest({ fakeModel: true, mockSlack: true }); // a proxy per worker, a scope per test

test('the agent answers a mention', async ({ vcr: { control, proxy } }) => {
  await control.model.respond('agent', ['Deploy 42 went out at 14:02.']);
  await using agent = await startAgent(proxy.env); // yours: your agent, spawned with the proxy's environment
  const thread = await say(control.slack, agent.url, 'did deploy 42 go out?'); // yours: seed Slack, post the event
  await expect.poll(() => replies(control.slack, thread), { timeout: 10_000 }).toEqual(['Deploy 42 went out at 14:02.']);
});
// README end
