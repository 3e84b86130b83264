// Progress events and holds: the async iterator, onProgress with a held
// model_request released after its handler, send while held, and waitIdle
// with a held request.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlError, startProxy } from '../src/index.js';
import type { ModelRequestEvent, Proxy, ProgressEvent } from '../src/index.js';
import { anthropic, tempDir, via } from './client-helpers.js';
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

/** next reads events until one of type typ (for request, when given). */
async function next<T extends ProgressEvent['type']>(
  it: AsyncIterator<ProgressEvent>,
  typ: T,
): Promise<Extract<ProgressEvent, { type: T }>> {
  for (;;) {
    const r = await it.next();
    if (r.done) throw new Error(`the event stream ended before a ${typ} event`);
    if (r.value.type === typ) return r.value as Extract<ProgressEvent, { type: T }>;
  }
}

test('events arrive in a request\'s order, typed, once the stream is ready', async () => {
  await proxy.control.model.respond('support', ['It went out at 14:02.']);
  const stream = proxy.control.events();
  await stream.ready;
  const got = await anthropic(d, { system: 'You are support.', messages: [{ role: 'user', content: 'when?' }] });
  expect(got.status).toBe(200);
  const types: string[] = [];
  let model: ModelRequestEvent | undefined;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'model_request') model = ev;
    if (ev.type === 'done') {
      expect(ev.finish?.reason).toBe('end_turn');
      break; // return() closes the stream
    }
  }
  expect(types.slice(0, 3)).toEqual(['request', 'model_request', 'response']);
  expect(types.at(-1)).toBe('done');
  expect(model?.model).toMatchObject({ dialect: 'anthropic', model: 'claude-sonnet-4-5', stream: false });
  expect(model?.held).toBeFalsy();
  await stream.closed;
});

test('onProgress holds a model_request until its handler settles, and send posts while it waits', async () => {
  await proxy.control.model.respond('support', ['answer after the steer']);
  const log: string[] = [];
  let inflightWhileHeld = -1;
  const sub = await proxy.control.onProgress(
    async (ev, { send }) => {
      if (ev.type !== 'model_request') return;
      log.push(`held ${ev.held}`);
      inflightWhileHeld = (await proxy.control.inflight()).count;
      await send({ text: 'also check the changelog' });
      log.push('handler done');
    },
    {
      hold: ['model_request'],
      send: async (input) => {
        log.push(`send ${JSON.stringify(input)}`);
      },
    },
  );
  const got = await anthropic(d, { messages: [{ role: 'user', content: 'deploy?' }] });
  log.push(`answered ${got.status}`);
  await sub.close();
  expect(log).toEqual(['held true', 'send {"text":"also check the changelog"}', 'handler done', 'answered 200']);
  expect(inflightWhileHeld).toBe(1);
  expect(sub.errors()).toEqual([]);
});

test('a handler that throws still releases its hold; the error is collected', async () => {
  await proxy.control.model.respond('support', ['fine']);
  await using sub = await proxy.control.onProgress(
    (ev) => {
      if (ev.type === 'model_request') throw new Error('handler broke');
    },
    { hold: ['model_request'], holdTimeoutMs: 20_000 },
  );
  const got = await anthropic(d, { messages: [{ role: 'user', content: 'x' }] });
  expect(got.status).toBe(200);
  await sub.close();
  expect(sub.errors().map((e) => e.message)).toEqual(['handler broke']);
  let sawRequest!: () => void;
  const saw = new Promise<void>((resolve) => (sawRequest = resolve));
  const noSend = await proxy.control.onProgress(async (ev, { send }) => {
    if (ev.type !== 'request') return;
    try {
      await send('x');
    } finally {
      sawRequest();
    }
  });
  await anthropic(d, { messages: [{ role: 'user', content: 'y' }] }); // unscripted: still events
  await saw;
  await noSend.close();
  expect(noSend.errors()[0]?.message).toMatch(/pass \{send\}|needs onProgress\(handler, \{ send/);
});

test('waitIdle times out naming a held request, and returns once it is released', async () => {
  await proxy.control.model.respond('support', ['released']);
  const stream = proxy.control.events({ hold: ['model_request'] });
  await stream.ready;
  const it = stream[Symbol.asyncIterator]();
  const pending = anthropic(d, { messages: [{ role: 'user', content: 'wait for me' }] });
  const held = await next(it, 'model_request');
  expect(held.held).toBe(true);
  const err = await proxy.control.waitIdle({ timeoutMs: 300 }).catch((e: Error) => e);
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toMatch(/1 request\(s\) still in flight after 300 ms/);
  expect((err as Error).message).toContain('POST https://api.anthropic.com/v1/messages');
  await proxy.control.release(held.id);
  expect((await pending).json().content[0].text).toBe('released');
  await proxy.control.waitIdle({ timeoutMs: 5_000 });
  await expect(proxy.control.release(held.id)).rejects.toMatchObject({ status: 404 });
  await expect(proxy.control.release(held.id)).rejects.toBeInstanceOf(ControlError);
  stream.close();
});

test('a hold past holdTimeoutMs fails the request; closing the stream ends its holds', async () => {
  await proxy.control.model.respond('support', ['late', 'after close']);
  const stream = proxy.control.events({ hold: ['model_request'], holdTimeoutMs: 200 });
  await stream.ready;
  const got = await anthropic(d, { messages: [{ role: 'user', content: 'nobody releases me' }] });
  expect(got.status).toBe(504);
  expect(got.text).toMatch(/hold/);
  stream.close();
  await stream.closed;

  const s2 = proxy.control.events({ hold: ['model_request'] });
  await s2.ready;
  const it = s2[Symbol.asyncIterator]();
  const pending = anthropic(d, { messages: [{ role: 'user', content: 'then the stream closes' }] });
  await next(it, 'model_request');
  s2.close();
  expect((await pending).status).toBe(200);
  await proxy.control.model.reset();
});

test('a bad hold is the proxy\'s 400 on ready and on iteration', async () => {
  const stream = proxy.control.events({ hold: ['request' as 'reply'] });
  await expect(stream.ready).rejects.toMatchObject({ status: 400, route: 'GET /v1/events' });
  await expect(
    (async () => {
      for await (const _ of stream);
    })(),
  ).rejects.toThrow(/cannot hold "request"/);
});

test('an aborted signal ends the iteration', async () => {
  const ac = new AbortController();
  const stream = proxy.control.events({ signal: ac.signal });
  await stream.ready;
  const seen: string[] = [];
  const done = (async () => {
    for await (const ev of stream) seen.push(ev.type);
  })();
  ac.abort();
  await done;
  await stream.closed;
  expect(seen).toEqual([]);
});

test('close() ends a subscription whose handler never settles, within the hold timeout, and says so', async () => {
  await proxy.control.model.respond('support', ['never asked for: the hold ends first']);
  let seen: ModelRequestEvent | undefined;
  const sub = await proxy.control.onProgress((ev) => {
    if (ev.type !== 'model_request') return undefined;
    seen = ev;
    return new Promise(() => {}); // never settles
  }, { hold: ['model_request'], holdTimeoutMs: 500 });
  const got = await anthropic(d, { system: 'You are support.', messages: [{ role: 'user', content: 'when?' }] });
  expect(got.status).toBe(504); // the hold expired
  const start = Date.now();
  await sub.close();
  expect(Date.now() - start).toBeLessThan(3_000);
  expect(sub.errors().map((e) => e.message)).toEqual([
    expect.stringContaining(`the handler for event ${seen!.id} (model_request) did not settle within 500 ms`),
  ]);
  proxy.control.takeProgressErrors();
});
