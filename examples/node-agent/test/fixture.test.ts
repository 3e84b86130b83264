// The Node agent through agentvcr's fixture, as a TypeScript team tests its
// own agent: run as a process, and started in this test's own process and
// attached. Inputs go through its routes, the model is scripted, history
// is loaded as rows into its PostgreSQL, and results are read from its
// reporting route (docs/typescript-agent.md).
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { recorded, recordedReply, rubric, slackMention, slackThreadMessage, useProxy, webMessage } from 'agentvcr';
import type { App } from 'agentvcr';
import { createFixtureTest } from 'agentvcr/vitest';
import { startAgent } from '../src/app.js';
import { ANTHROPIC_KEY, SLACK } from './harness.js';

const ADMIN = 'test-admin-secret-not-real';

// The agent's own description: its command, secrets and routes.
const nodeAgent: App = {
  name: 'examples/node-agent',
  command: [process.execPath, fileURLToPath(new URL('../src/server.js', import.meta.url))],
  addrEnv: 'AGENT_ADDR',
  env: { SLACK_SIGNING_SECRET: SLACK.signingSecret, SLACK_BOT_TOKEN: SLACK.botToken, ANTHROPIC_API_KEY: ANTHROPIC_KEY, AGENT_ADMIN_SECRET: ADMIN },
  routes: { preset: 'junior', idle: '/api/internal/idle' },
  slackSigningSecret: SLACK.signingSecret,
  adminSecret: ADMIN,
};

// The same agent started in this process: the fixture hands it the
// environment it must run with, and asks its idle callback.
let running: Awaited<ReturnType<typeof startAgent>> | undefined;
let idleAsked = 0;
const inProcess: App = {
  ...nodeAgent,
  command: undefined,
  addrEnv: undefined,
  routes: { preset: 'junior' },
  attach: async (env) => {
    // This process's fetch and node:https go through the fixture's proxy.
    const proxied = useProxy({ url: env.HTTPS_PROXY!, caPath: env.NODE_EXTRA_CA_CERTS!, env });
    running = await startAgent({ env, log: () => {} });
    const agent = running;
    return { url: agent.url, close: async () => { await agent.close(); proxied.restore(); } };
  },
  idle: () => {
    idleAsked++;
    return running?.idle() ?? true;
  },
};

const assistant = { name: 'assistant', systemPrefix: 'You are a helpful assistant' };
const judge = { name: 'judge', systemPrefix: 'You are a strict evaluator' };
const launchPlanning = fileURLToPath(new URL('../../../history/testdata/launch-planning.json', import.meta.url));
// A sanitized Slack thread the repository keeps in recordings/.
const slackThread = fileURLToPath(new URL('../../../recordings/samples/slack-thread.json', import.meta.url));

for (const [how, app] of [['as a process', nodeAgent], ['in process', inProcess]] as const) {
  const test = createFixtureTest(app, { scriptedModel: true });

  test(`${how}: a web conversation runs and goes on, from its rows`, async ({ fixture: f }) => {
    await f.model.respond(assistant, ['Deploy 42 went out at 14:02.', 'Nothing since.']);
    const first = await f.run(webMessage('Did deploy 42 go out?'));
    expect(first.replyTexts).toEqual(['Deploy 42 went out at 14:02.']);
    expect(first.turns.map((t) => t.status)).toEqual(['succeeded']);
    const next = await first.continue(webMessage('Anything since?'));
    expect(next.id).toBe(first.id);
    expect(next.replyTexts).toEqual(['Nothing since.']);
    // The second prompt was built from the stored rows of the first turn.
    await f.model.assertPrompted(assistant, 'Deploy 42 went out at 14:02.');
    // In process, the fixture asked the agent's idle callback.
    if (app.attach) expect(idleAsked).toBeGreaterThan(0);
  });

  // The contract's recall example on the Node agent: the recording is
  // loaded as rows, the agent reads it back, a judge agrees.
  test(`${how}: recall from recorded history, judged, then continued`, async ({ fixture: f }) => {
    await f.model.respond(assistant, ['We ship on March 12, and Priya owns it.', 'The billing migration.']);
    await f.model.respond(judge, [{ output: { answer: 'A', rationale: 'recalls the date and the owner' } }]);
    const conversation = await f.run(webMessage('Remind me: when do we ship, and who owns it?'), {
      history: [recorded(launchPlanning)],
      criteria: rubric({ pass: ['says March 12', 'names Priya'], fail: ['gives another date'] }),
    });
    expect(conversation.scores.map((s) => s.verdict.answer)).toEqual(['A']);
    await f.model.assertPrompted(assistant, 'Help me plan the Orbit launch');
    const next = await conversation.continue(webMessage('And the main risk?'));
    expect(next.replyTexts).toEqual(['The billing migration.']);
  });

  test(`${how}: a Slack thread from recordings/ goes on, and forks at one of its replies`, async ({ fixture: f }) => {
    await f.model.respond(assistant, ['The cache key fix.', 'From the fork: 14:02.']);
    const thread = await f.run(slackThreadMessage('Which fix matters most?'), { history: [recorded(slackThread)] });
    expect(thread.replyTexts).toEqual(['The cache key fix.']);
    // The agent read the loaded rows as its own history.
    await f.model.assertPrompted(assistant, 'Two fixes: the retry budget and the cache key.');
    const posts = await f.slack.calls('chat.postMessage');
    expect(posts.calls.map((c) => c.params.text)).toEqual(['The cache key fix.']);
    const fork = await thread.fork(recordedReply({ containing: 'went out at 14:02' }));
    const after = await fork.continue(webMessage('When did it go out?'));
    expect(after.replyTexts).toEqual(['From the fork: 14:02.']);
    expect(after.earlier).toContain('The deploy went out at 14:02');
    expect(after.earlier).not.toContain('Two fixes');
  });

  test(`${how}: a fork at a reply goes on without what came after it`, async ({ fixture: f }) => {
    await f.model.respond(assistant, ['March 12.', 'Priya.', 'Still March 12, in the fork.']);
    const first = await f.run(webMessage('When do we ship?'));
    const later = await first.continue(webMessage('Who owns it?'));
    expect(later.replyTexts).toEqual(['Priya.']);
    const fork = await first.fork(first.replies[0]!);
    expect(fork.id).not.toBe(first.id);
    const after = await fork.continue(webMessage('Confirm the date?'));
    expect(after.replyTexts).toEqual(['Still March 12, in the fork.']);
    expect(after.earlier).toContain('March 12.');
    expect(after.earlier).not.toContain('Priya.');
  });

  // Progress with send: a thread message sent while the agent's model
  // request is held joins the turn's next request (the Node agent steers
  // rather than stops), and the one reply follows it.
  test(`${how}: a Slack message sent from progress steers the turn`, async ({ fixture: f }) => {
    await f.model.respond(assistant, [
      // A page the tool refuses without going anywhere: its result is an error.
      { toolCalls: [{ name: 'fetch_page', input: { url: 'ftp://deploys.example/42' } }], then: 'À 14 h 02.' },
    ]);
    let sent = false;
    const conversation = await f.run(slackMention('when did the deploy go out?'), {
      onProgress: async (p, { send }) => {
        if (p.type === 'model_request' && !sent) {
          sent = true;
          await send(slackThreadMessage('in French, please'));
        }
      },
    });
    expect(conversation.replyTexts).toEqual(['À 14 h 02.']);
    expect(conversation.toolCalls.map((c) => [c.name, c.status, c.output])).toEqual([['fetch_page', 'error', 'only http and https pages can be fetched, not ftp:']]);
    await f.model.assertPrompted(assistant, 'in French, please');
    const posts = await f.slack.calls('chat.postMessage');
    expect(posts.calls.map((c) => c.params.text)).toEqual(['À 14 h 02.']);
  });
}
