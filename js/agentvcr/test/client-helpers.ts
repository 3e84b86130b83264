// Shared by the client's tests: a real loopback HTTPS origin with its own
// CA, and undici clients that go through a proxy trusting its CA (the
// tests do not depend on useProxy).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProxyAgent, request } from 'undici';
import { afterAll } from 'vitest';
import type { Dispatcher } from 'undici';
import type { Proxy } from '../src/index.js';

const made: string[] = [];
// Registered as the file imports this module, so it runs after the file's
// own afterAll hooks (vitest runs them as a stack): after its proxies stop.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** tempDir makes a fresh directory under the OS temp dir, removed after the test file. */
export function tempDir(prefix = 'agentvcr-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A CA and a certificate it signed for 127.0.0.1 and localhost, made with openssl. */
export function makeCert(dir: string): { caPath: string; key: string; cert: string } {
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=agentvcr test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=127.0.0.1', '-keyout', f('srv.key'), '-out', f('srv.csr'));
  writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  ssl('x509', '-req', '-in', f('srv.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-days', '2', '-extfile', f('ext.cnf'), '-out', f('srv.pem'));
  return { caPath: f('ca.pem'), key: readFileSync(f('srv.key'), 'utf8'), cert: readFileSync(f('srv.pem'), 'utf8') };
}

/** A loopback HTTPS origin; its handler answers every request. */
export interface Origin {
  url: string;
  caPath: string;
  hits: string[];
  close(): Promise<void>;
}

/** startOrigin serves handler (default: JSON naming the path) over HTTPS on 127.0.0.1. */
export async function startOrigin(
  handler: (req: IncomingMessage, res: ServerResponse) => void = (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url }));
  },
): Promise<Origin> {
  const { caPath, key, cert } = makeCert(tempDir('agentvcr-origin-'));
  const hits: string[] = [];
  const server = createServer({ key, cert }, (req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    caPath,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** via is an undici dispatcher through the proxy, trusting its CA. */
export function via(proxy: Pick<Proxy, 'url' | 'caPath'>): ProxyAgent {
  return new ProxyAgent({ uri: proxy.url, requestTls: { ca: readFileSync(proxy.caPath, 'utf8') } });
}

/** A response read whole. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

/** send makes one request with dispatcher and reads its answer whole. */
export async function send(
  dispatcher: Dispatcher,
  url: string,
  init: { method?: Dispatcher.HttpMethod; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const res = await request(url, {
    dispatcher,
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A minimal Anthropic Messages request, as the SDK sends it. */
export function anthropic(dispatcher: Dispatcher, body: Record<string, unknown>): Promise<Answer> {
  return send(dispatcher, 'https://api.anthropic.com/v1/messages', {
    headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
    body: { model: 'claude-sonnet-4-5', max_tokens: 256, ...body },
  });
}

/** median of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * alive reports whether a process with this pid runs: an exited one whose
 * parent died may stay a zombie a while (until init reaps it), which
 * process.kill(pid, 0) cannot tell from a live one, /proc can.
 */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** until polls cond every 20 ms until it holds, or throws after ms. */
export async function until(what: string, cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
