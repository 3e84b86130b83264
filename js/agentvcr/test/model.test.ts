// The scripted model in Guren's shape, driven through the Anthropic
// Messages and OpenAI wire formats as an SDK sends them.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { startProxy } from '../src/index.js';
import type { FakeAgent, Proxy } from '../src/index.js';
import { anthropic, send, tempDir, via } from './client-helpers.js';
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
  await proxy.control.model.reset();
});

const lookup = { name: 'lookup', description: 'Looks up a deploy.', input_schema: { type: 'object', properties: { q: { type: 'string' } } } };

test('a tool call, then the answer to the prompt carrying its result', async () => {
  const model = proxy.control.model;
  const support: FakeAgent = { name: 'support', tools: ['lookup'] };
  await using _script = await model.respond(support, [
    { toolCalls: [{ name: 'lookup', input: { q: 'deploy' } }], then: 'It went out at 14:02.' },
  ]);
  const user = { role: 'user', content: 'When did the deploy go out?' };
  const first = (await anthropic(d, { system: 'You are support.', tools: [lookup], messages: [user] })).json();
  expect(first.stop_reason).toBe('tool_use');
  const use = first.content.find((c: { type: string }) => c.type === 'tool_use');
  expect(use).toMatchObject({ name: 'lookup', input: { q: 'deploy' } });
  const second = (
    await anthropic(d, {
      system: 'You are support.',
      tools: [lookup],
      messages: [
        user,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'deployed 14:02 UTC' }] },
      ],
    })
  ).json();
  expect(second.content[0].text).toBe('It went out at 14:02.');

  const calls = await model.calls('support');
  expect(calls.calls).toHaveLength(2);
  expect(calls.calls[0]!.toolCalls?.[0]).toMatchObject({ name: 'lookup', returned: true, result: 'deployed 14:02 UTC' });
  expect(calls.failures).toEqual([]);
  await model.assertPrompted('support', 'When did the deploy go out?');
  await model.assertPrompted(support, (p) => p.results?.some((r) => r.content.includes('14:02 UTC')) ?? false);
  await model.assertNotPrompted('support', 'refund');
  await model.assertNeverPrompted('billing');
});

test('agents are told apart by their matchers; truncated and provider errors answer in the dialect', async () => {
  const model = proxy.control.model;
  await model.respond({ name: 'triage', systemContains: 'triage' }, [{ truncated: 'The first half of' }]);
  await model.respond({ name: 'writer', systemPrefix: 'You write' }, [{ providerError: 529 }, 'A poem.']);
  const cut = (await anthropic(d, { system: 'You triage tickets.', messages: [{ role: 'user', content: 't' }] })).json();
  expect(cut.stop_reason).toBe('max_tokens');
  const overloaded = await anthropic(d, { system: 'You write poems.', messages: [{ role: 'user', content: 'w' }] });
  expect(overloaded.status).toBe(529);
  expect(overloaded.json().error.type).toBe('overloaded_error');
  const poem = await anthropic(d, { system: 'You write poems.', messages: [{ role: 'user', content: 'w' }] });
  expect(poem.json().content[0].text).toBe('A poem.');
  await model.assertNeverPrompted('nobody');
  expect((await model.calls('triage')).calls).toHaveLength(1);
});

test('the assertions fail loudly, saying what the agent was asked', async () => {
  const model = proxy.control.model;
  await model.respond('support', ['hi']);
  await anthropic(d, { system: 'You are support.', messages: [{ role: 'user', content: 'my order is late' }] });
  await expect(model.assertPrompted('support', 'refund')).rejects.toThrow(
    /agent "support" was never prompted with "refund"; its 1 prompt\(s\):\n {2}- system "You are support."; 1 message\(s\), last user: "my order is late"/,
  );
  await expect(model.assertPrompted('billing', 'x')).rejects.toThrow(/it got no prompts at all/);
  await expect(model.assertNotPrompted('support', 'late')).rejects.toThrow(/agent "support" was prompted with "late" \(prompt 1 of 1\)/);
  await expect(model.assertNeverPrompted('support')).rejects.toThrow(/expected never to be prompted, but got 1 prompt/);
});

test('a script disposed with answers left unused throws, naming them', async () => {
  const model = proxy.control.model;
  const script = await model.respond('support', ['used', 'left over']);
  await anthropic(d, { messages: [{ role: 'user', content: 'one' }] });
  await expect(script[Symbol.asyncDispose]()).rejects.toThrow(
    /agent "support": 1 scripted answer\(s\) never asked for \(the agent made 1 of 2 model calls so far[^\n]*\n {2}- \{"text":"used"\}\n {2}- \{"text":"left over"\}/,
  );
  await anthropic(d, { messages: [{ role: 'user', content: 'two' }] });
  await script.assertUsed();
  // A later script counts after the earlier ones.
  const later = await model.respond('support', ['three']);
  await expect(later.assertUsed()).rejects.toThrow(/1 scripted answer/);
  await anthropic(d, { messages: [{ role: 'user', content: 'three' }] });
  await later[Symbol.asyncDispose]();
});

test('embeddings and images answer from their queues and are listed', async () => {
  const model = proxy.control.model;
  await model.respondEmbeddings([
    [0.1, 0.2],
    [0.3, 0.4],
  ]);
  const emb = await send(d, 'https://api.openai.com/v1/embeddings', {
    headers: { authorization: 'Bearer sk-test' },
    body: { model: 'text-embedding-3-small', input: ['alpha', 'beta'] },
  });
  expect(emb.status).toBe(200);
  expect(emb.json().data.map((x: { embedding: number[] }) => x.embedding)).toEqual([
    [0.1, 0.2],
    [0.3, 0.4],
  ]);
  expect(await model.embeddings()).toEqual([{ model: 'text-embedding-3-small', values: ['alpha', 'beta'], vectors: [[0.1, 0.2], [0.3, 0.4]] }]);

  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  await model.respondImages([png]);
  const img = await send(d, 'https://api.openai.com/v1/images/generations', {
    headers: { authorization: 'Bearer sk-test' },
    body: { model: 'gpt-image-1', prompt: 'a cat', n: 1 },
  });
  expect(img.status).toBe(200);
  expect(img.json().data[0].b64_json).toBe(Buffer.from(png).toString('base64'));
  expect(await model.images()).toMatchObject([{ model: 'gpt-image-1', prompt: 'a cat', n: 1 }]);
});

test('reset forgets scripts and calls, and is refused while a scope is open', async () => {
  const model = proxy.control.model;
  await model.respond('support', ['never used']);
  await anthropic(d, { messages: [{ role: 'user', content: 'unscripted? no' }] });
  await model.reset();
  expect(await model.calls()).toEqual({ calls: [], failures: [] });
  await proxy.control.beginScope('open');
  await expect(model.reset()).rejects.toMatchObject({ status: 409, route: 'DELETE /v1/fakeai' });
  await proxy.control.endScope('open', true);
});
