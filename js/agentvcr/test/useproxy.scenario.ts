// What useproxy.test.ts checks, as one function it runs in the vitest
// process (the PATH's Node) and in a child on Node 22 (type stripping), so
// that both Nodes' bundled fetch meet npm undici's dispatcher.
import http from 'node:http';
import https from 'node:https';
import { Agent } from 'undici';
import { useProxy } from '../src/useproxy.ts';

export interface ScenarioInput {
  proxy: { url: string; caPath: string; env: Record<string, string>; controlUrl: string };
  /** Allowed by the proxy: plain HTTP and HTTPS on 127.0.0.1. */
  plain: string;
  secure: string;
  /** On 127.0.0.1, not allowed: nothing may reach it. */
  refused: string;
  /** On 127.0.0.1, not allowed, reached around the proxy by an Agent of the test's own, and as localhost (NO_PROXY). */
  bystander: string;
}

export interface Outcome { status?: number; header?: string | null; body?: string; error?: string }

export interface ScenarioOutput {
  node: string;
  undici: string | undefined;
  through: Record<string, Outcome>;
  refused: Record<string, Outcome>;
  exempt: Outcome;
  violations: string[];
  restored: { dispatcher: boolean; http: boolean; https: boolean };
  afterRestore: Outcome;
}

const viaFetch = async (url: string, init?: RequestInit & { dispatcher?: unknown }): Promise<Outcome> => {
  try {
    const r = await fetch(url, init);
    return { status: r.status, header: r.headers.get('x-agentvcr'), body: await r.text() };
  } catch (e) {
    return { error: String((e as Error).cause ?? e) };
  }
};

const viaGet = (url: string, agent?: http.Agent): Promise<Outcome> => new Promise((resolve) => {
  const mod = url.startsWith('https:') ? https : http;
  mod.get(url, agent ? { agent } : {}, (r) => {
    let body = '';
    r.on('data', (d) => { body += d; });
    r.on('end', () => resolve({ status: r.statusCode, header: (r.headers['x-agentvcr'] as string | undefined) ?? null, body }));
  }).on('error', (e) => resolve({ error: String(e) }));
});

export async function scenario(input: ScenarioInput): Promise<ScenarioOutput> {
  const key = Symbol.for('undici.globalDispatcher.1');
  const before = { dispatcher: (globalThis as Record<symbol, unknown>)[key], http: http.globalAgent, https: https.globalAgent };
  // The proxy allows origins on 127.0.0.1, so its env's NO_PROXY exempts
  // no loopback name; a noProxy of the test's own does.
  const use = useProxy({ ...input.proxy, noProxy: ['localhost'] }, { guard: true });
  const through = {
    'fetch http': await viaFetch(`${input.plain}/fetch`),
    'fetch https': await viaFetch(`${input.secure}/fetch`),
    'node:http': await viaGet(`${input.plain}/http`),
    'node:https': await viaGet(`${input.secure}/https`),
  };
  const refused = {
    fetch: await viaFetch(`${input.refused}/fetch`),
    'node:http': await viaGet(`${input.refused}/http`),
  };
  const exempt = await viaFetch(`${input.bystander.replace('127.0.0.1', 'localhost')}/exempt`);
  // Around the proxy, as a library with its own Agent or dispatcher goes.
  await viaGet(`${input.bystander}/own-agent`, new http.Agent());
  await viaFetch(`${input.bystander}/own-dispatcher`, { dispatcher: new Agent() });
  const violations = use.violations();
  use.restore();
  use.restore(); // idempotent
  const restored = {
    dispatcher: (globalThis as Record<symbol, unknown>)[key] === before.dispatcher,
    http: http.globalAgent === before.http,
    https: https.globalAgent === before.https,
  };
  const afterRestore = await viaFetch(`${input.bystander}/after`);
  return { node: process.version, undici: process.versions.undici, through, refused, exempt, violations, restored, afterRestore };
}

// Run as a child: the input as argv's last JSON, the output on stdout.
if (process.argv[1] === new URL(import.meta.url).pathname) {
  scenario(JSON.parse(process.argv[2]!) as ScenarioInput).then(
    (out) => console.log(JSON.stringify(out)),
    (err) => { console.error(err); process.exit(1); },
  );
}
