// fixture() and the vitest fixture beyond the contract's examples: forks
// at loaded history, another instance with other options, a call that
// never goes idle, failures left at close, and errors that name the
// problem. All on the reference agent run as a process.
import { expect } from 'vitest';
import { createFixtureTest } from '../src/vitest.js';
import { fixture, FixtureError, recorded, recordedReply, reply, slackMention, webMessage } from '../src/index.js';
import type { InputItem } from '../src/index.js';
import { launchPlanning, loop, referenceAgent, routed, router, titler } from './reference-agent.js';

const test = createFixtureTest(referenceAgent, { scriptedModel: true });

test('each call is recorded on task.meta.harness as the contract records it', async ({ fixture: f, task }) => {
  await f.model.respond(router, [routed, routed]);
  await f.model.respond(titler, ['Deploy question']);
  await f.model.respond(loop, [
    { toolCalls: [{ name: 'slackThreadRead', arguments: {} }], then: { text: 'Deploy 42 went out at 14:02.' } },
    'Nothing since.',
  ]);
  const first = await f.run(slackMention('did deploy 42 go out?'));
  const next = await first.continue(slackMention('anything since?'));
  expect(next.id).toBe(first.id);
  expect(next.replyTexts).toEqual(['Nothing since.']);
  const run = task.meta.harness!.run;
  expect(run.metadata.conversation_ids).toEqual([first.id]);
  expect(run.session.events.map((e) => e.type + ('role' in e ? `:${e.role}` : ''))).toEqual([
    'message:user', 'tool_call', 'tool_result', 'message:assistant', 'message:user', 'message:assistant',
  ]);
  expect(run.usage.metadata.gatewayRequests).toBe(first.modelRequests.length + next.modelRequests.length);
  // The scripted model's models have no price: the cost is unknown, not zero.
  expect(run.usage.metadata.costUsd).toBeNull();
  expect(run.timings.calls.map((c) => c.op)).toEqual(['run', 'continue']);
});

test('a fork at a loaded reply item, and at a recording\'s reply', async ({ fixture: f }) => {
  await f.model.respond(router, [routed, routed, routed, routed]);
  await f.model.respond(loop, ['Still March 12.', 'Forked at the date.', 'Orbit, where we left it.', 'Forked in the recording.']);
  const date = reply('March 12.', { tools: [{ name: 'search', input: { q: 'launch' }, result: 'March 12' }] });
  const built = await f.run(webMessage('Confirm the date?'), {
    history: [webMessage('When is the launch?'), date, webMessage('Who owns it?'), reply('Priya.')],
  });
  expect(built.replyTexts).toEqual(['Still March 12.']);
  const fork = await built.fork(date);
  expect(fork.id).not.toBe(built.id);
  const after = await fork.continue(webMessage('And then?'));
  expect(after.replyTexts).toEqual(['Forked at the date.']);
  expect(after.earlier).toContain('March 12.');
  expect(after.earlier).not.toContain('Priya.');

  const rec = await f.run(webMessage('Where were we?'), { history: [recorded(launchPlanning)] });
  const recFork = await rec.fork(recordedReply({ position: 1 }));
  expect(recFork.id).not.toBe(rec.id);
  expect((await recFork.continue(webMessage('Go on.'))).replyTexts).toEqual(['Forked in the recording.']);
});

test('agent(options) starts another instance on the same data', async ({ fixture: f }) => {
  await f.model.respond(router, [routed, routed]);
  await f.model.respond(titler, ['Hello', 'Hello again']);
  await f.model.respond(loop, ['From the first.', 'From the second.']);
  const second = await f.agent({ limits: { toolCalls: 3 } });
  expect(second.appUrl).not.toBe(f.appUrl);
  expect((await f.run(webMessage('hello'))).replyTexts).toEqual(['From the first.']);
  const c = await second.run(webMessage('hello again'));
  expect(c.replyTexts).toEqual(['From the second.']);
});

test('a call that never goes idle fails with what was open', async () => {
  await using f = await fixture(referenceAgent, { scriptedModel: true, idleTimeoutMs: 1500 });
  await f.model.respond(router, [routed]);
  await f.model.respond(titler, ['Held']);
  await f.model.respond(loop, ['never seen']);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const call = f.run(webMessage('hello'), {
    // The agent's model request waits for this handler, which waits past
    // the idle timeout.
    onProgress: async (p) => {
      if (p.type === 'model_request' && p.purpose === 'agent') await held;
    },
  });
  const err = await call.then(() => undefined, (e: unknown) => e);
  release();
  expect(err).toBeInstanceOf(FixtureError);
  expect((err as FixtureError).timeout).toBe(true);
  expect((err as FixtureError).message).toMatch(/not idle after 1\.5s.*in flight at the proxy: POST https:\/\//s);
});

test('failures that did not end a call are thrown at close', async () => {
  const f = await fixture(referenceAgent, { scriptedModel: true });
  await f.model.respond(router, [routed]);
  await f.model.respond(titler, ['Hi']);
  await f.model.respond(loop, ['Hello.', 'Never asked for.']);
  expect((await f.run(webMessage('hello'))).replyTexts).toEqual(['Hello.']);
  const err = await f.close().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(FixtureError);
  expect((err as FixtureError).message).toContain('never asked for');
  // Closing again answers as the first close did; a call after it says why it cannot run.
  expect(await f.close().then(() => undefined, (e: unknown) => e)).toBe(err);
  await expect(f.run(webMessage('again'))).rejects.toThrow(/is closed: make a new one/);
});

test('what the service refuses is named', async () => {
  // An option the app does not take fails before anything starts.
  const refused = await fixture(referenceAgent, { agent: { slackCrossActorSteering: 'queue' } }).then(() => undefined, (e: unknown) => e);
  expect(refused).toBeInstanceOf(FixtureError);
  expect((refused as FixtureError).message).toContain('does not take the agent option SlackCrossActorSteering');
  // A misspelt option name in the app's description.
  const misspelt = await fixture({ ...referenceAgent, options: { turnTimout: 'X' } as never }).then(() => undefined, (e: unknown) => e);
  expect((misspelt as FixtureError).message).toContain('no agent option is named "turnTimout"');
  // An input kind the service does not know.
  await using f = await fixture(referenceAgent, { scriptedModel: true });
  const bad = await f.run({ kind: 'slackMentoin', text: 'x' } as unknown as InputItem).then(() => undefined, (e: unknown) => e);
  expect((bad as FixtureError).status).toBe(400);
  expect((bad as FixtureError).message).toContain('input kind "slackMentoin"');
});
