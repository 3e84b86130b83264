// A child Node process with the environment the proxy hands out (the start
// line's env, Proxy.env) reaches an origin on loopback only through the
// proxy: fetch and node:http(s) with the default agent, on the PATH's Node,
// Node 22 (js/node22) and Node 24 (js/node24). The preload the environment loads routes
// them on Node that does not itself (see proxy/node-proxy.cjs).
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startProxy, type Proxy } from '../src/index.js';
import { node22, node24, selfSigned, startOrigin, tempDir, type Origin } from './useproxy.helpers.js';

// The child: for each URL, fetch it and GET it with node:http(s), and
// print what came back (or the error) as JSON.
const child = `
const get = (url) => new Promise((resolve) => {
  const mod = require(url.startsWith('https:') ? 'node:https' : 'node:http');
  mod.get(url, (r) => {
    let body = '';
    r.on('data', (d) => { body += d; });
    r.on('end', () => resolve({ status: r.statusCode, header: r.headers['x-agentvcr'] ?? null, body }));
  }).on('error', (e) => resolve({ error: String(e) }));
});
(async () => {
  const out = { version: process.version, results: [] };
  for (const url of JSON.parse(process.argv[1])) {
    let f;
    try {
      const r = await fetch(url + '/fetch');
      f = { status: r.status, header: r.headers.get('x-agentvcr'), body: await r.text() };
    } catch (e) { f = { error: String(e.cause ?? e) }; }
    out.results.push({ url, how: 'fetch', ...f });
    out.results.push({ url, how: 'node:http', ...(await get(url + '/http')) });
  }
  console.log(JSON.stringify(out));
})();
`;

interface Result { url: string; how: string; status?: number; header?: string | null; body?: string; error?: string }

function runChild(node: string, env: Record<string, string>, urls: string[]): Promise<{ version: string; results: Result[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(node, ['-e', child, JSON.stringify(urls)], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      timeout: 20_000,
    }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${node}: ${err.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      resolve({ ...JSON.parse(stdout), stderr });
    });
  });
}

describe('a child Node process with the proxy environment', () => {
  let plain: Origin;
  let secure: Origin;
  let refused: Origin; // on loopback, not allowed, not exempt by NO_PROXY
  let proxy: Proxy;
  let cleanup: () => void;

  beforeAll(async () => {
    let dir: string;
    [dir, cleanup] = tempDir('agentvcr-child-');
    const cert = selfSigned(dir);
    [plain, secure, refused] = await Promise.all([startOrigin(), startOrigin(cert), startOrigin()]);
    proxy = await startProxy({
      mode: 'passthrough', dir: `${dir}/cassettes`, caDir: `${dir}/ca`, allow: [plain.url, secure.url], upstreamCA: [cert.certPath],
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([plain, secure, refused].map((o) => o?.close()));
    cleanup?.();
  });

  test('NO_PROXY leaves out the allowed loopback host', () => {
    expect(proxy.env.NO_PROXY!.split(',')).not.toContain('127.0.0.1');
  });

  for (const [name, node] of [['PATH node', 'node'], ['Node 22', node22], ['Node 24', node24]] as const) {
    test(`${name}: fetch and node:http(s) reach allowed origins through the proxy, and nothing else`, async () => {
      const before = { plain: plain.requests().length, secure: secure.requests().length };
      const { version, results, stderr } = await runChild(node, proxy.env, [plain.url, secure.url, refused.url]);
      if (node !== 'node') expect(version).toMatch(node === node22 ? /^v22\./ : /^v24\./);
      for (const r of results.filter((r) => r.url !== refused.url)) {
        expect(r, `${version} ${r.how} ${r.url}`).toMatchObject({ status: 200, body: `hello /${r.how === 'fetch' ? 'fetch' : 'http'}` });
        expect(r.header, `${version} ${r.how} ${r.url}: the proxy's X-Agentvcr header`).toBeTruthy();
      }
      // Each request reached the origin once: through the proxy, as each
      // response carries the proxy's header.
      expect(plain.requests().length - before.plain).toBe(2);
      expect(secure.requests().length - before.secure).toBe(2);
      for (const r of results.filter((r) => r.url === refused.url)) {
        expect(r.status === 200 && r.body?.startsWith('hello'), `${version} ${r.how} reached ${r.url}: ${JSON.stringify(r)}`).toBe(false);
      }
      expect(refused.connections(), 'connections at the origin the proxy does not allow').toBe(0);
      expect(stderr).not.toMatch(/agentvcr: WARNING/);
    });
  }
});
