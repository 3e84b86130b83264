// useProxy sends this process's fetch and node:http(s) through the proxy,
// on the PATH's Node (in the vitest process) and on Node 22 and 24 (a
// child that runs the same scenario), and its guard names what went around it.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { useProxy } from '../src/useproxy.js';
import { scenario, type ScenarioInput, type ScenarioOutput } from './useproxy.scenario.js';
import { startProxy, type Proxy } from '../src/index.js';
import { node22, node24, selfSigned, startOrigin, tempDir, type Origin } from './useproxy.helpers.js';

const scenarioPath = fileURLToPath(new URL('./useproxy.scenario.ts', import.meta.url));

function onNode(node: string, input: ScenarioInput): Promise<ScenarioOutput> {
  return new Promise((resolve, reject) => {
    execFile(node, ['--experimental-strip-types', '--no-warnings', scenarioPath, JSON.stringify(input)], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      timeout: 20_000,
    }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${node}: ${err.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      resolve(JSON.parse(stdout) as ScenarioOutput);
    });
  });
}

describe('useProxy', () => {
  let plain: Origin, secure: Origin, refused: Origin, bystander: Origin;
  let proxy: Proxy;
  let cleanup: () => void;
  let input: ScenarioInput;

  beforeAll(async () => {
    let dir: string;
    [dir, cleanup] = tempDir('agentvcr-useproxy-');
    const cert = selfSigned(dir);
    [plain, secure, refused, bystander] = await Promise.all([startOrigin(), startOrigin(cert), startOrigin(), startOrigin()]);
    proxy = await startProxy({
      mode: 'passthrough', dir: `${dir}/cassettes`, caDir: `${dir}/ca`, allow: [plain.url, secure.url], upstreamCA: [cert.certPath],
    });
    input = {
      proxy: { url: proxy.url, caPath: proxy.caPath, env: proxy.env, controlUrl: proxy.controlUrl },
      plain: plain.url, secure: secure.url, refused: refused.url, bystander: bystander.url,
    };
  });
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([plain, secure, refused, bystander].map((o) => o?.close()));
    cleanup?.();
  });

  const check = (out: ScenarioOutput): void => {
    for (const [how, r] of Object.entries(out.through)) {
      expect(r, `${out.node} ${how}`).toMatchObject({ status: 200 });
      expect(r.header, `${out.node} ${how}: the proxy's X-Agentvcr header`).toBeTruthy();
    }
    for (const [how, r] of Object.entries(out.refused)) {
      expect(r.status === 200 && r.body?.startsWith('hello'), `${out.node} ${how} reached ${refused.url}: ${JSON.stringify(r)}`).toBe(false);
    }
    expect(out.exempt, `${out.node} localhost is in noProxy`).toMatchObject({ status: 200, header: null, body: 'hello /exempt' });
    expect(out.violations, out.violations.join('\n\n')).toHaveLength(2);
    expect(out.violations[0]).toMatch(new RegExp(`^node:http connection to ${bystander.url}:?\\d* went around the proxy`));
    expect(out.violations[0]).toContain('useproxy.scenario.ts'); // the stack of the request
    expect(out.violations[1]).toMatch(new RegExp(`^fetch \\(undici\\) connection to ${bystander.url} went around the proxy`));
    expect(out.restored).toEqual({ dispatcher: true, http: true, https: true });
    expect(out.afterRestore).toMatchObject({ status: 200, header: null, body: 'hello /after' });
  };

  test('on the PATH Node, in this process', async () => {
    const before = { plain: plain.requests().length, secure: secure.requests().length };
    check(await scenario(input));
    expect(plain.requests().length - before.plain).toBe(2);
    expect(secure.requests().length - before.secure).toBe(2);
    expect(refused.connections()).toBe(0);
  });

  for (const [node, major, undici] of [[node22, 22, 6], [node24, 24, 7]] as const) {
    test(`on Node ${major}, whose bundled fetch (undici ${undici}) meets npm undici 7`, async () => {
      const before = { plain: plain.requests().length, secure: secure.requests().length };
      const out = await onNode(node, input);
      expect(out.node).toMatch(new RegExp(`^v${major}\\.`));
      expect(out.undici).toMatch(new RegExp(`^${undici}\\.`));
      check(out);
      expect(plain.requests().length - before.plain).toBe(2);
      expect(secure.requests().length - before.secure).toBe(2);
      expect(refused.connections()).toBe(0);
    });
  }

  test('Symbol.dispose restores; the control API is reached directly', async () => {
    const before = http.globalAgent;
    {
      using use = useProxy(input.proxy, { guard: true });
      expect(http.globalAgent).not.toBe(before);
      // The control API on the proxy's host, which the proxy does not allow.
      const r = await fetch(`${proxy.controlUrl}/v1/stats`, { headers: { authorization: `Bearer ${proxy.token}` } });
      expect(r.status).toBe(200);
      expect(use.violations()).toEqual([]);
    }
    expect(http.globalAgent).toBe(before);
  });

  test('agent: false (a fresh agent of the global one\'s class) tunnels too', async () => {
    using use = useProxy(input.proxy, { guard: true });
    const before = plain.requests().length;
    const u = new URL(plain.url);
    const got = await new Promise<{ status?: number; header?: string | string[] }>((resolve, reject) => {
      http.get({ host: u.hostname, port: u.port, path: '/agent-false', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, header: res.headers['x-agentvcr'] }));
      }).on('error', reject);
    });
    expect(got.status).toBe(200);
    expect(got.header, "the proxy's X-Agentvcr header").toBeTruthy();
    expect(plain.requests().length - before).toBe(1);
    expect(use.violations()).toEqual([]);
  });

  test('an allowed loopback origin under another loopback name, or a Host header naming one, is never exempt', async () => {
    // The proxy allows http://127.0.0.1:P: its env's NO_PROXY holds no
    // loopback name (an older recorder's held the other two).
    const port = new URL(plain.url).port;
    const get = (path: string, opts: http.RequestOptions = {}) =>
      new Promise<{ status?: number; header: string | null }>((resolve, reject) => {
        http.get({ host: 'localhost', port, path, ...opts }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, header: (res.headers['x-agentvcr'] as string | undefined) ?? null }));
        }).on('error', reject);
      });
    const cases: [string, () => Promise<{ status?: number; header: string | null }>][] = [
      ['fetch', async () => {
        const r = await fetch(`http://localhost:${port}/loopback-fetch`);
        await r.arrayBuffer();
        return { status: r.status, header: r.headers.get('x-agentvcr') };
      }],
      ['node:http', () => get('/loopback-http')],
    ];
    const targets = [input.proxy, { ...input.proxy, env: { ...input.proxy.env, NO_PROXY: 'localhost,::1' } }];
    for (const [how, run] of cases) for (const target of targets) {
      using use = useProxy(target, { guard: true });
      const before = plain.connections();
      const r = await run().catch((err: Error) => ({ status: 0, header: null, err }));
      const direct = plain.connections() > before && r.header === null;
      if (direct) expect(use.violations(), `${how}: localhost:${port} went around the proxy unreported`).toHaveLength(1);
    }
    {
      // An Agent of its own to 127.0.0.1 with "Host: localhost:P", localhost exempt.
      using use = useProxy({ ...input.proxy, noProxy: ['localhost'] }, { guard: true });
      const r = await get('/host-trick', { host: '127.0.0.1', agent: new http.Agent(), headers: { host: `localhost:${port}` } });
      expect(r).toMatchObject({ status: 200, header: null });
      expect(use.violations()).toHaveLength(1);
      expect(use.violations()[0]).toMatch(new RegExp(`^node:http connection to http://127\\.0\\.0\\.1:${port} went around the proxy`));
    }
  });

  test('says what to do with a bad CA path', () => {
    expect(() => useProxy({ url: proxy.url, caPath: '/nonexistent/ca.pem' })).toThrow(/cannot read the proxy's CA/);
  });
});
