// startProxy and the control client against the real recorder: start and
// close, failed starts, a proxy that dies, many proxies on one cassette
// directory, scopes (422 included) and waitIdle.
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProxyAgent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Control, ControlError, ScopeFailedError, startProxy } from '../src/index.js';
import type { Proxy } from '../src/index.js';
import { anthropic, median, send, startOrigin, tempDir, via } from './client-helpers.js';
import type { Origin } from './client-helpers.js';

const caDir = tempDir('agentvcr-ca-');

test('startProxy hands out the proxy, its control API, CA and env; close writes and exits', async () => {
  const proxy = await startProxy({ dir: tempDir(), caDir, fakeModel: true });
  expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(proxy.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(proxy.token).toMatch(/^[0-9a-f]{48}$/);
  expect(proxy.caPath.startsWith(caDir)).toBe(true);
  expect(proxy.env.HTTPS_PROXY).toBe(proxy.url);
  expect(proxy.env.NODE_EXTRA_CA_CERTS).toBe(proxy.caPath);
  expect(await proxy.control.stats()).toMatchObject({ replayed: 0, recorded: 0, faked: 0 });
  await proxy.close();
  await proxy.close(); // idempotent
  expect(await proxy.exited).toEqual({ code: 130, signal: null });
  await expect(proxy.control.stats()).rejects.toThrow(ControlError);
});

test('startProxy to ready, median of 20', async () => {
  const dir = tempDir();
  const times: number[] = [];
  const closes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const proxy = await startProxy({ dir, caDir });
    times.push(performance.now() - t0);
    const t1 = performance.now();
    await proxy.close();
    closes.push(performance.now() - t1);
  }
  console.log(`startProxy to ready: median ${median(times).toFixed(1)} ms of 20; close: median ${median(closes).toFixed(1)} ms`);
  expect(times).toHaveLength(20);
});

test('a proxy that cannot start rejects with its exit code and stderr', async () => {
  const err = await startProxy({ dir: tempDir(), caDir, args: ['--no-such-flag'] }).catch((e: Error) => e);
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toMatch(/exited with code \d+ before it was ready/);
  expect((err as Error).message).toContain('no-such-flag');
});

test('a missing binary says how to name one', async () => {
  const err = await startProxy({ binary: '/nonexistent/recorder' }).catch((e: Error) => e);
  expect((err as Error).message).toMatch(/cannot run the recorder binary: .*ENOENT.*set AGENTVCR_BINARY/);
});

test('a wrong token is the API\'s 401, as a ControlError', async () => {
  await using proxy = await startProxy({ dir: tempDir(), caDir });
  const wrong = new Control(proxy.controlUrl, 'not-the-token');
  await expect(wrong.stats()).rejects.toMatchObject({ name: 'ControlError', status: 401, route: 'GET /v1/stats' });
  await wrong.close();
});

test('control calls never go through a global dispatcher that routes this process through the proxy', async () => {
  await using proxy = await startProxy({ dir: tempDir(), caDir });
  const before = getGlobalDispatcher();
  setGlobalDispatcher(new ProxyAgent({ uri: proxy.url }));
  try {
    await proxy.control.beginScope('through?');
    const stream = proxy.control.events();
    await stream.ready;
    stream.close();
    await proxy.control.endScope('through?', true);
    // Routed through the proxy, a loopback call would have been refused (403).
    expect(await proxy.control.stats()).toMatchObject({ refused: 0, passthrough: 0, live: 0 });
  } finally {
    const ours = getGlobalDispatcher();
    setGlobalDispatcher(before);
    await ours.close();
  }
});

test('a proxy that prints no start line is killed at the deadline, its stderr in the error', async () => {
  const dir = tempDir();
  const fake = join(dir, 'recorder');
  writeFileSync(fake, '#!/bin/sh\necho "warming up forever" >&2\nexec sleep 60\n');
  chmodSync(fake, 0o755);
  const t0 = performance.now();
  const err = await startProxy({ binary: fake, startTimeoutMs: 500, log: 'silent' }).catch((e: Error) => e);
  expect(performance.now() - t0).toBeLessThan(5_000);
  expect((err as Error).message).toMatch(/no start line within 500 ms/);
  expect((err as Error).message).toContain('warming up forever');
});

test('a proxy that dies later fails calls and close at once, naming the exit', async () => {
  const proxy = await startProxy({ dir: tempDir(), caDir });
  const events = proxy.control.events();
  await events.ready;
  process.kill(proxy.pid, 'SIGKILL');
  await proxy.exited;
  const iterate = async () => {
    for await (const _ of events); // ends, never hangs
  };
  await expect(iterate()).rejects.toThrow(/event stream failed: .*\(the proxy exited with signal SIGKILL\)/);
  const err = await proxy.control.inflight().catch((e: ControlError) => e);
  expect(err).toBeInstanceOf(ControlError);
  expect((err as ControlError).status).toBe(0);
  expect((err as ControlError).message).toContain('signal SIGKILL');
  await expect(proxy.close()).rejects.toThrow(/the proxy had died: the proxy exited with signal SIGKILL/);
  await expect(proxy.control.waitIdle({ timeoutMs: 1000 })).rejects.toThrow(ControlError);
});

test('an event stream left mid-request does not hold up the proxy\'s stop', async () => {
  const proxy = await startProxy({ dir: tempDir(), caDir, fakeModel: true });
  await proxy.control.model.respond('a', ['streamed words, several of them']);
  const d = via(proxy);
  const stream = proxy.control.events();
  await stream.ready;
  const pending = anthropic(d, { stream: true, messages: [{ role: 'user', content: 'x' }] });
  for await (const ev of stream) if (ev.type === 'response') break;
  expect((await pending).status).toBe(200);
  await d.close();
  const t0 = performance.now();
  await proxy.close();
  // A lingering stream connection kept the stop waiting for seconds.
  expect(performance.now() - t0).toBeLessThan(3_000);
});

describe('with an origin', () => {
  let origin: Origin;
  beforeAll(async () => {
    origin = await startOrigin();
  });
  afterAll(() => origin.close());

  const opts = (dir: string, mode?: 'auto' | 'replay', ca = caDir) => ({
    dir,
    caDir: ca,
    allow: [origin.url],
    upstreamCA: [origin.caPath],
    ...(mode ? { mode } : {}),
  });

  test('four proxies record into one directory at once; a replay proxy finds every recording', async () => {
    const dir = tempDir();
    // A fresh CA directory too: the four make (or load) one CA between them.
    const fresh = tempDir('agentvcr-ca-');
    const proxies = await Promise.all([0, 1, 2, 3].map(() => startProxy(opts(dir, 'auto', fresh))));
    await Promise.all(
      proxies.map(async (p, i) => {
        const d = via(p);
        const got = await send(d, `${origin.url}/worker/${i}`);
        expect(got.status).toBe(200);
        expect(got.headers['x-agentvcr']).toBe('recorded');
        await d.close();
      }),
    );
    await Promise.all(proxies.map((p) => p.close()));
    const cassettes = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(cassettes).toHaveLength(1);

    const hits = origin.hits.length;
    await using replay = await startProxy(opts(dir, 'replay'));
    const d = via(replay);
    for (const i of [3, 1, 0, 2]) {
      const got = await send(d, `${origin.url}/worker/${i}`);
      expect(got.status).toBe(200);
      expect(got.headers['x-agentvcr']).toBe('replayed');
      expect(got.json()).toEqual({ path: `/worker/${i}` });
    }
    expect(origin.hits.length).toBe(hits); // nothing went live
    expect(await replay.control.stats()).toMatchObject({ replayed: 4, missed: 0 });
    await d.close();
  });

  test('a scope writes its recordings only when passed; misses name the nearest', async () => {
    const dir = tempDir();
    {
      await using proxy = await startProxy(opts(dir, 'auto'));
      const d = via(proxy);
      await proxy.control.beginScope('failing test');
      await expect(proxy.control.beginScope('second')).rejects.toMatchObject({ status: 409, route: 'POST /v1/scopes' });
      await send(d, `${origin.url}/dropped`);
      expect(await proxy.control.endScope('failing test', false)).toMatchObject({ recorded: 0, dropped: 1 });
      await proxy.control.beginScope('passing test');
      await send(d, `${origin.url}/kept`);
      expect(await proxy.control.endScope('passing test', true)).toEqual({ missed: 0, recorded: 1 });
      await expect(proxy.control.endScope('passing test', true)).rejects.toMatchObject({ status: 409 });
      await d.close();
    }
    await using replay = await startProxy(opts(dir, 'replay'));
    const d = via(replay);
    expect((await send(d, `${origin.url}/kept`)).headers['x-agentvcr']).toBe('replayed');
    expect((await send(d, `${origin.url}/dropped`)).status).toBe(412);
    const misses = await replay.control.misses();
    expect(misses).toHaveLength(1);
    expect(misses[0]).toMatchObject({ method: 'GET', url: `${origin.url}/dropped` });
    await d.close();
  });

  test('beginScope + endScope, median of 20', async () => {
    await using proxy = await startProxy(opts(tempDir(), 'auto'));
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await proxy.control.beginScope(`scope ${i}`);
      await proxy.control.endScope(`scope ${i}`, true);
      times.push(performance.now() - t0);
    }
    console.log(`beginScope + endScope: median ${median(times).toFixed(2)} ms of 20`);
  });
});

describe('scopes with the scripted model', () => {
  let proxy: Proxy;
  beforeAll(async () => {
    proxy = await startProxy({ dir: tempDir(), caDir, fakeModel: true });
  });
  afterAll(() => proxy.close());

  test('a scope fails (422) on an unscripted prompt and on unused answers, with the lists', async () => {
    const d = via(proxy);
    const { control } = proxy;
    await control.beginScope('unscripted');
    const got = await anthropic(d, { messages: [{ role: 'user', content: 'nobody scripted this' }] });
    expect(got.status).toBeGreaterThanOrEqual(400);
    const err = await control.endScope('unscripted', true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScopeFailedError);
    const f = err as ScopeFailedError;
    expect(f.status).toBe(422);
    expect(f.unscripted.join('\n')).toContain('nobody scripted this');
    expect(f.message).toContain('unscripted prompts');

    await control.beginScope('unused');
    await control.model.respond('support', ['first', 'never asked for']);
    const ok = await anthropic(d, { messages: [{ role: 'user', content: 'hello' }] });
    expect(ok.json().content[0].text).toBe('first');
    const err2 = (await control.endScope('unused', true).catch((e: unknown) => e)) as ScopeFailedError;
    expect(err2).toBeInstanceOf(ScopeFailedError);
    expect(err2.unused.join('\n')).toContain('never asked for');
    expect(err2.unscripted).toEqual([]);
    expect(err2.message).toContain('never asked for');

    // The unused answer was dropped: the next scope starts clean.
    await control.beginScope('clean');
    await control.model.respond('support', ['fresh']);
    expect((await anthropic(d, { messages: [{ role: 'user', content: 'again' }] })).json().content[0].text).toBe('fresh');
    expect(await control.endScope('clean', true)).toMatchObject({ missed: 0 });
    await d.close();
  });
});
