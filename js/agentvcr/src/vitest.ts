// "agentvcr/vitest": vitest's test with a recording proxy per worker and a
// test scope per test, ended with the test's result.
import { createHash } from 'node:crypto';
import { test as base } from 'vitest';
import type { TaskMeta, TestAPI, TestContext } from 'vitest';
import { ScopeFailedError } from './control.js';
import type { Control } from './control.js';
import type { MissReport, Stats } from './openapi.js';
import { startProxy } from './proxy.js';
import type { Proxy, ProxyOptions } from './proxy.js';
import { useProxy } from './useproxy.js';
import type { ProxyUse, UseProxyOptions } from './useproxy.js';
import { fixture, startFixtureService } from './fixture.js';
import type { App, CallRecord, Conversation, Fixture, FixtureOptions, FixtureService, FixtureServiceOptions, InputItem } from './fixture.js';

/**
 * How the worker's proxy is started: startProxy's options that a config
 * can hold (JSON: no binary path from code, no env). The mode defaults to
 * the proxy's: replay when CI is set, else auto.
 */
export type AgentvcrOptions = Omit<ProxyOptions, 'env'>;

/** What a test's scope did, in task.meta.agentvcr (and so in reporters, e.g. the JSON reporter's meta). */
export interface AgentvcrMeta {
  /** The scope's name: the test's full name, made unique in the worker. */
  scope: string;
  /** The proxy the worker ran, as http://127.0.0.1:PORT. */
  proxy: string;
  /** Whether the scope ended as passed (its recordings written). */
  passed: boolean;
  /** Recordings written (passed) or dropped (failed). */
  recorded: number;
  dropped: number;
  /** Replay misses in the scope, with the nearest recording of each. */
  missed: number;
  misses: MissReport[];
  /** Requests the scripted model answered. */
  modelCalls: number;
  /** What the proxy did in the scope, by outcome. */
  stats: Stats;
  /** The scope's problems: unused scripts, unscripted prompts, unknown Slack methods. */
  unused: string[];
  unscripted: string[];
  unknownSlack: string[];
  /** Connections that went around the proxy, when the test called vcr.useProxy(). */
  violations: string[];
}

/** One event of a harness run's session, as Junior's fixture records them. */
export type HarnessEvent =
  | { type: 'message'; role: 'user' | 'assistant'; text: string; conversationId: string }
  | { type: 'tool_call'; toolCallId: string; name: string; input?: unknown; conversationId: string }
  | { type: 'tool_result'; toolCallId: string; name: string; status: string; output?: string; conversationId: string };

/**
 * What a test's fixture did, in task.meta.harness, in the shape of Junior's
 * fixture contract ({name, run}): the session's events, the conversations,
 * the model usage and cost, each call's time, and the errors.
 */
export interface HarnessMeta {
  name: 'agentvcr';
  run: {
    session: { events: HarnessEvent[] };
    metadata: { conversation_ids: string[] };
    /** costUsd is null when a model request is unpriced: an unknown cost is not zero. */
    usage: { metadata: { costUsd: number | null; gatewayRequests: number } };
    timings: { calls: { op: string; conversationId: string; durationMs: number }[] };
    errors: string[];
  };
}

declare module 'vitest' {
  interface TaskMeta {
    /** What agentvcr's vcr fixture saw: the test's scope and what the proxy did in it. */
    agentvcr?: AgentvcrMeta;
    /** What the test's fixture did (createFixtureTest), as Junior's contract records it. */
    harness?: HarnessMeta;
  }
  interface ProvidedContext {
    /** The worker proxy's options for "agentvcr/vitest", from the config's test.provide. */
    agentvcr: AgentvcrOptions;
  }
}

/** The per-test fixture: the test's scope on the worker's proxy. */
export interface Vcr {
  /** The scope's name. */
  readonly name: string;
  /** The worker's proxy. */
  readonly proxy: Proxy;
  /** Its control client (scripted model, Slack mock, faults, progress). */
  readonly control: Control;
  /**
   * Sends this process's fetch and node:http(s) through the proxy for the
   * rest of the test (useProxy with its guard): a connection that goes
   * around the proxy fails the test. Restored when the test ends.
   */
  useProxy(opts?: UseProxyOptions): ProxyUse;
}

/** The fixtures "agentvcr/vitest" adds to vitest's test. */
export interface AgentvcrFixtures {
  /** The test's scope; set up for every test (auto), ended with the test's result. */
  vcr: Vcr;
}
/** The worker-scoped fixtures: the options and the proxy they start. */
export interface AgentvcrWorkerFixtures {
  agentvcr: AgentvcrOptions;
  proxy: Proxy;
}

/**
 * What createTest returns: vitest's test with these fixtures, `proxy` and
 * `agentvcr` marked worker-scoped (vitest's $__worker), so that a worker
 * fixture built on them type-checks:
 * `test.extend('agent', { scope: 'worker' }, ({ proxy }) => ...)`.
 */
export type AgentvcrTestAPI = TestAPI<AgentvcrFixtures & AgentvcrWorkerFixtures & {
  readonly $__worker?: AgentvcrWorkerFixtures;
  readonly $__test?: AgentvcrFixtures;
}>;

/** The longest scope name the proxy takes, in bytes (control.MaxScopeName). */
const maxScopeName = 256;

/**
 * scopeName fits a test's name to the proxy's limit: a longer one keeps
 * its beginning and ends with a hash of the whole, so that it stays unique.
 */
export function scopeName(full: string): string {
  if (Buffer.byteLength(full) <= maxScopeName) return full;
  const tail = ` … #${createHash('sha256').update(full).digest('hex').slice(0, 12)}`;
  let prefix = '';
  for (const ch of full) {
    if (Buffer.byteLength(prefix + ch + tail) > maxScopeName) break;
    prefix += ch;
  }
  return prefix + tail;
}

const sub = (a: Stats, b: Stats): Stats =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k as keyof Stats] ?? 0)])) as unknown as Stats;

/**
 * createTest returns vitest's test extended with:
 *
 * - `proxy` (worker scope): one proxy per worker (startProxy), started on
 *   first use and closed when the worker ends, so no setup file is
 *   needed: this fixture is the "one proxy per worker" a setup file would
 *   start, and unlike a setup file it hands the proxy to the test typed.
 *   Its options are `options` with the config's `test.provide.agentvcr`
 *   laid over them (an injected fixture, the way vitest lets a config set
 *   a fixture's value; see mergeOptions). Workers share the cassette directory;
 *   the proxy's cassette locks keep each one's recordings.
 * - `vcr` (per test, automatic): a scope named after the test's full name
 *   (file > describe > test), ended with the test's result, which vitest
 *   has settled before fixtures are torn down: a failed test's recordings
 *   are dropped. The scope's problems (unused scripts, unscripted prompts,
 *   unknown Slack methods), replay misses, errors of onProgress handlers
 *   and, after vcr.useProxy(), connections around the proxy fail the test. What happened is in
 *   task.meta.agentvcr.
 */
export function createTest(options: AgentvcrOptions = {}): AgentvcrTestAPI {
  const names = new Map<string, number>();
  // The scope open on this worker's proxy, which has one at a time.
  let open: string | undefined;
  return base.extend({
    agentvcr: [{}, { scope: 'worker', injected: true }] as never,
    proxy: [
      async ({ agentvcr }: { agentvcr: AgentvcrOptions }, use: (p: Proxy) => Promise<void>) => {
        const proxy = await startProxy(mergeOptions(options, agentvcr));
        try {
          await use(proxy);
        } finally {
          await proxy.close();
        }
      },
      { scope: 'worker' },
    ] as never,
    vcr: [
      async ({ proxy, task }: { proxy: Proxy; task: TestContext['task'] }, use: (v: Vcr) => Promise<void>) => {
        const full = [task.file.name, ...suiteNames(task), task.name].join(' > ');
        const n = (names.get(full) ?? 0) + 1;
        names.set(full, n);
        const name = scopeName(n === 1 ? full : `${full} (${n})`);
        const concurrent = (): Error => new Error('agentvcr: vcr supports one test at a time per worker (test.concurrent is not supported): ' +
          `${JSON.stringify(name)} started while ${JSON.stringify(open)} was running; drop .concurrent, ` +
          'or put the tests in separate files, which vitest runs in separate workers');
        if (open !== undefined) throw concurrent();
        open = name;
        try {
          await vcrScope(name, proxy, task, use);
        } finally {
          open = undefined;
        }
      },
      { auto: true },
    ] as never,
  }) as unknown as AgentvcrTestAPI;

  /** vcrScope is the vcr fixture of a test, once it is the worker's only one. */
  async function vcrScope(name: string, proxy: Proxy, task: TestContext['task'], use: (v: Vcr) => Promise<void>): Promise<void> {
    const { control } = proxy;
    const [statsBefore, missesBefore] = await Promise.all([control.stats(), control.misses()]);
    // Each test's scripted model starts empty; the proxy refuses this while a scope is open.
    await control.model.reset();
    await control.beginScope(name);
    const uses: ProxyUse[] = [];
    await use({
      name,
      proxy,
      control,
      useProxy: (opts) => {
        const u = useProxy(proxy, { guard: true, ...opts });
        uses.push(u);
        return u;
      },
    });
    // vitest has set the test's state by now (runTest: the test, then
    // afterEach, then fixture teardown).
    const violations = uses.flatMap((u) => u.violations());
    const handlerErrors = control.takeProgressErrors();
    for (const u of uses.reverse()) u.restore();
    const passed = task.result?.state !== 'fail' && violations.length === 0 && handlerErrors.length === 0;
    let failure: ScopeFailedError | undefined;
    let result: { recorded: number; missed: number; dropped?: number } | undefined;
    try {
      result = await control.endScope(name, passed);
    } catch (err) {
      if (!(err instanceof ScopeFailedError)) throw err;
      failure = err;
    }
    const [statsAfter, missesAfter] = await Promise.all([control.stats(), control.misses()]);
    const stats = sub(statsAfter, statsBefore);
    const misses = missesAfter.slice(missesBefore.length);
    const meta: AgentvcrMeta = {
      scope: name,
      proxy: proxy.url,
      passed: passed && !failure,
      recorded: passed && !failure ? (result?.recorded ?? 0) : 0,
      dropped: failure?.dropped ?? result?.dropped ?? (passed ? 0 : result?.recorded ?? 0),
      missed: failure?.missed ?? result?.missed ?? 0,
      misses,
      modelCalls: stats.faked,
      stats,
      unused: failure?.unused ?? [],
      unscripted: failure?.unscripted ?? [],
      unknownSlack: failure?.unknownSlack ?? [],
      violations,
    };
    (task.meta as TaskMeta).agentvcr = meta;
    const problems: string[] = [];
    if (failure) problems.push(failure.message);
    if (meta.missed > 0) {
      problems.push(`agentvcr: scope ${JSON.stringify(name)}: ${meta.missed} replay miss(es): nothing recorded matched ` +
        '(record again locally without CI set, or see the nearest recording):\n' +
        misses.map((m) => `  - ${m.method} ${m.url}${m.nearestUrl ? ` (nearest ${m.nearestUrl}${m.differ?.length ? `, differs in ${m.differ.join(', ')}` : ''})` : ''}`).join('\n'));
    }
    if (handlerErrors.length > 0) {
      problems.push(`agentvcr: scope ${JSON.stringify(name)}: ${handlerErrors.length} onProgress handler(s) failed:\n` +
        handlerErrors.map((e) => `  - ${String(e.stack ?? e.message).replace(/\n/g, '\n    ')}`).join('\n'));
    }
    if (violations.length > 0) {
      problems.push(`agentvcr: scope ${JSON.stringify(name)}: ${violations.length} connection(s) went around the proxy ` +
        '(a library with its own Agent or dispatcher: give it none, or one through HTTPS_PROXY):\n' +
        violations.map((v) => `  - ${v.replace(/\n/g, '\n    ')}`).join('\n'));
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }
}

/**
 * mergeOptions lays the config's options (test.provide.agentvcr) over the
 * code's (createTest): a field the config sets wins, except the lists
 * (allow, upstreamCA, args), which the config extends.
 */
function mergeOptions(code: AgentvcrOptions, config: AgentvcrOptions): AgentvcrOptions {
  const merged: AgentvcrOptions = { ...code, ...config };
  for (const k of ['allow', 'upstreamCA', 'args'] as const) {
    if (code[k] && config[k]) merged[k] = [...code[k], ...config[k]];
  }
  return merged;
}

/** The names of the describe blocks a test is in, outermost first. */
function suiteNames(task: TestContext['task']): string[] {
  const names: string[] = [];
  for (let s = task.suite; s && s !== (task.file as unknown); s = s.suite) names.unshift(s.name);
  return names;
}

/** How createFixtureTest sets up each test's fixture: fixture()'s options, and the worker's service's. */
export interface FixtureTestOptions extends Omit<FixtureOptions, 'service' | 'name' | 'onCall'> {
  service?: FixtureServiceOptions;
}

/** The fixtures createFixtureTest adds. */
export interface FixtureTestFixtures {
  /** The test's fixture of the app: run, agent, the scripted model, inserts. Closed when the test ends; its failures fail the test. */
  fixture: Fixture;
}
/** The worker-scoped one: the fixture service the worker's tests share. */
export interface FixtureTestWorkerFixtures {
  fixtureService: FixtureService;
}

export type FixtureTestAPI = TestAPI<FixtureTestFixtures & FixtureTestWorkerFixtures & {
  readonly $__worker?: FixtureTestWorkerFixtures;
  readonly $__test?: FixtureTestFixtures;
}>;

/**
 * createFixtureTest returns vitest's test extended with:
 *
 * - `fixtureService` (worker scope): one `recorder fixture serve` per
 *   worker, started on first use and stopped when the worker ends.
 * - `fixture` (per test): fixture(app, options) on that service, named
 *   after the test's full name, closed when the test ends (failures left,
 *   such as an unused script, fail the test). Each call is recorded on
 *   task.meta.harness, in the shape of Junior's fixture contract.
 */
export function createFixtureTest(app: App, options: FixtureTestOptions = {}): FixtureTestAPI {
  const { service: serviceOptions, ...fixtureOptions } = options;
  return base.extend({
    fixtureService: [
      async ({}, use: (s: FixtureService) => Promise<void>) => {
        const service = await startFixtureService(serviceOptions);
        try {
          await use(service);
        } finally {
          await service.close();
        }
      },
      { scope: 'worker' },
    ] as never,
    fixture: (async ({ fixtureService, task }: { fixtureService: FixtureService; task: TestContext['task'] }, use: (f: Fixture) => Promise<void>) => {
        const meta: HarnessMeta = {
          name: 'agentvcr',
          run: { session: { events: [] }, metadata: { conversation_ids: [] }, usage: { metadata: { costUsd: 0, gatewayRequests: 0 } }, timings: { calls: [] }, errors: [] },
        };
        (task.meta as TaskMeta).harness = meta;
        const f = await fixture(app, {
          ...fixtureOptions,
          service: fixtureService,
          name: [task.file.name, ...suiteNames(task), task.name].join(' > '),
          onCall: (c, call) => record(meta, c, call),
        });
        try {
          await use(f);
        } finally {
          try {
            await f.close();
          } catch (err) {
            meta.run.errors.push(err instanceof Error ? err.message : String(err));
            throw err;
          }
        }
      }) as never,
  }) as unknown as FixtureTestAPI;
}

/** record adds a call to the test's harness meta. */
function record(meta: HarnessMeta, c: Conversation, call: CallRecord): void {
  const run = meta.run;
  const id = c.id;
  if (!run.metadata.conversation_ids.includes(id)) run.metadata.conversation_ids.push(id);
  const inputs = call.input === undefined ? [] : Array.isArray(call.input) ? call.input : [call.input];
  for (const i of inputs as InputItem[]) {
    if (i.text) run.session.events.push({ type: 'message', role: 'user', text: i.text, conversationId: id });
  }
  for (const t of c.toolCalls) {
    run.session.events.push({ type: 'tool_call', toolCallId: t.toolCallId, name: t.name, input: t.input, conversationId: id });
    run.session.events.push({ type: 'tool_result', toolCallId: t.toolCallId, name: t.name, status: t.status, output: t.output, conversationId: id });
  }
  for (const r of c.replies) run.session.events.push({ type: 'message', role: 'assistant', text: r.text, conversationId: id });
  const usage = run.usage.metadata;
  usage.gatewayRequests += c.modelRequests.length;
  for (const m of c.modelRequests) usage.costUsd = usage.costUsd === null || m.costUsd === null ? null : usage.costUsd + m.costUsd;
  run.timings.calls.push({ op: call.op, conversationId: id, durationMs: Math.round(call.durationMs) });
}

/**
 * vitest's test with the worker's `proxy` and each test's `vcr` scope (see
 * createTest); the proxy's options come from the config's
 * `test.provide.agentvcr`.
 */
export const test = createTest();
export { expect, describe } from 'vitest';
