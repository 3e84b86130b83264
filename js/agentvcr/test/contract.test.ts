// Junior's fixture contract's five examples, through fixture() and the
// fixture service, on the reference agent run as a process: the same
// scripts and assertions as the Go tests in examples/agent/fixturetest
// (docs/contract.md shows them side by side).
import { expect, test } from 'vitest';
import { fixture, githubWebhook, heartbeat, recorded, rubric, slackMention, slackThreadMessage, webMessage } from '../src/index.js';
import { launchPlanning, loop, referenceAgent, routed, router, titler } from './reference-agent.js';

// The contract's stop example: a stop sent while the agent's model
// request waits at the gateway interrupts the running turn.
test('a stop sent from progress interrupts the turn', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true });
  await f.model.respond(router, [routed]);
  await f.model.respond(titler, ['A long report']);
  // The held request may still reach the model as the agent gives up
  // on it: an answer is scripted, and need not be used.
  await f.model.respond(loop, ['Here is the report.']);
  let sent = false;
  const conversation = await f.run(slackMention('write me a long report'), {
    onProgress: async (p, { send }) => {
      if (p.type === 'model_request' && p.purpose === 'agent' && !sent) {
        sent = true;
        await send(slackThreadMessage('stop'));
      }
    },
  });
  expect(conversation.turns.map((t) => t.outcome)).toEqual(['cancelled']);
  expect(conversation.replyTexts).toEqual(["OK, I'll stay out of this thread."]);
  await f.model.reset();
});

// The contract's automation digest: a heartbeat runs the due automation,
// and run returns the conversation it started.
test('a heartbeat runs the automation digest', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true });
  await f.model.respond(router, [routed]);
  await f.model.respond(loop, ['Digest: 3 deploys, 0 incidents.']);
  await f.insertScheduledAutomation({ id: 'daily-digest', task: 'Post the daily deploy digest.' });
  const conversation = await f.run(heartbeat());
  expect(conversation.replyTexts).toEqual(['Digest: 3 deploys, 0 incidents.']);
  expect(conversation.turns.map((t) => t.status)).toEqual(['succeeded']);
  const posts = await f.slack.calls('chat.postMessage');
  expect(posts.calls.map((c) => c.params.channel)).toEqual(['CEVAL00001']);
  await f.model.assertPrompted(loop, 'Post the daily deploy digest.');
});

// The contract's recall example: with the launch planned in history, the
// agent recalls it, a judge agrees, and the conversation goes on.
test('recall with history and criteria, then continue', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true });
  const judge = { name: 'judge', systemPrefix: 'You are a strict evaluator' };
  await f.model.respond(router, [routed, routed]);
  await f.model.respond(loop, ['We ship on March 12, and Priya owns it.', 'The billing migration.']);
  await f.model.respond(judge, [{ output: { answer: 'A', rationale: 'recalls the date and the owner' } }]);
  const conversation = await f.run(webMessage('Remind me: when do we ship, and who owns it?'), {
    history: [recorded(launchPlanning)],
    criteria: rubric({ pass: ['says March 12', 'names Priya'], fail: ['gives another date'] }),
  });
  expect(conversation.scores.map((s) => s.verdict.answer)).toEqual(['A']);
  // The judge read the recorded conversation as the earlier one.
  await f.model.assertPrompted(judge, '<earlier_conversation>\nuser: Help me plan the Orbit launch');
  const next = await conversation.continue(webMessage('And the main risk?'));
  expect(next.replyTexts).toEqual(['The billing migration.']);
  expect(next.turns.map((t) => t.status)).toEqual(['succeeded']);
});

// The contract's compaction example: under a small context window the
// agent summarizes the loaded history and the turn still succeeds.
test('compaction under a small context window', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true, agent: { limits: { contextWindowTokens: 500 } } });
  const summarizer = { name: 'summary', purpose: 'text' };
  await f.model.respond(router, [routed]);
  await f.model.respond(summarizer, ['Orbit ships March 12; Priya owns it; the billing migration is the risk.']);
  await f.model.respond(loop, ['Priya.']);
  const conversation = await f.run(webMessage('Who owns Orbit?'), { history: [recorded(launchPlanning)] });
  expect(conversation.turns.map((t) => t.status)).toEqual(['succeeded']);
  await f.model.assertPrompted(summarizer, 'Summarize the conversation');
  await f.model.assertPrompted(loop, '<conversation-summary>');
  await f.model.assertNotPrompted(loop, 'Help me plan the Orbit launch');
});

// The contract's event automation: a GitHub webhook runs the automation
// it matches, and run returns the conversation that started, whose reply
// went to the automation's channel.
test('a GitHub webhook runs the event automation', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true });
  await f.model.respond(router, [routed]);
  await f.model.respond(loop, ['Triaged: a crash on login, likely the auth service.']);
  await f.insertEventAutomation('triage', 'Triage the new issue.', { source: 'github', type: 'issues.opened' });
  const conversation = await f.run(githubWebhook('issues', {
    action: 'opened',
    issue: { number: 12, title: 'Crash on login', state: 'open', html_url: 'https://github.com/acme/app/issues/12' },
    repository: { full_name: 'acme/app' },
    sender: { login: 'octocat' },
  }));
  expect(conversation.replyTexts).toEqual(['Triaged: a crash on login, likely the auth service.']);
  expect(conversation.turns.map((t) => t.status)).toEqual(['succeeded']);
  const posts = await f.slack.calls('chat.postMessage');
  expect(posts.calls.map((c) => c.params.channel)).toEqual(['CEVAL00001']);
  for (const want of ['Triage the new issue.', 'github event issues.opened on github:acme/app#12', 'Title: Crash on login', 'By: octocat']) {
    await f.model.assertPrompted(loop, want);
  }
});
