// fixture(): the Go test fixture (package fixture) from TypeScript, shaped
// like getsentry/junior's fixture contract. The fixture runs in
// `recorder fixture serve` (fixtureservice/): this module starts it, sends
// it what a test asks and hands back what it answers. No fixture logic is
// here: inputs, history, idleness, judges and reports are the Go code's.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { Agent, request } from 'undici';
import { resolveBinary } from './binary.js';
import { startRecorder } from './child.js';
import { Control } from './control.js';
import type { SlackControl } from './control.js';
import type * as api from './fixture-openapi.js';
import type { ScriptedModel } from './model.js';

export type {
  AgentOptions,
  Conversation as ConversationResult,
  EventFilter,
  InputItem,
  Limits,
  ModelRequest,
  Progress,
  Reply,
  Routes,
  Rubric,
  Score,
  ToolCall,
  ToolUse,
  Turn,
} from './fixture-openapi.js';

// ---- the service

/** How startFixtureService runs `recorder fixture serve`. */
export interface FixtureServiceOptions {
  /** A PostgreSQL server (postgres:// URL of a user who may create databases) for the fixtures' databases; default: a throwaway cluster the service starts on first need. */
  databaseServer?: string;
  /** The recorder binary; default resolveBinary(). */
  binary?: string;
  /** Its environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** quiet (default): its stderr on this process's; silent: kept for errors. */
  log?: 'quiet' | 'silent';
  /** How long it may take to print its start line (default 30000). */
  startTimeoutMs?: number;
}

/** A running fixture service. close() (or `await using`) stops it, ending the fixtures left. */
export interface FixtureService extends AsyncDisposable {
  readonly url: string;
  readonly token: string;
  readonly pid: number;
  close(): Promise<void>;
}

interface ServiceLine {
  url: string;
  token: string;
}

function isServiceLine(v: unknown): v is ServiceLine {
  if (typeof v !== 'object' || v === null) return false;
  const l = v as Record<string, unknown>;
  return typeof l.url === 'string' && l.url !== '' && typeof l.token === 'string' && l.token !== '';
}

/**
 * startFixtureService spawns `recorder fixture serve` on loopback and
 * resolves once it is ready. It stops when close() is called, and when
 * this process dies, however (its stdin is a pipe this process holds).
 */
export async function startFixtureService(options: FixtureServiceOptions = {}): Promise<FixtureService> {
  const args = ['fixture', 'serve', '--listen', '127.0.0.1:0'];
  if (options.databaseServer) args.push('--database-server', options.databaseServer);
  const child = await startRecorder({
    binary: options.binary ?? resolveBinary(), args, command: ['fixture', 'serve'], env: options.env,
    log: options.log ?? 'quiet', startTimeoutMs: options.startTimeoutMs,
    caller: 'startFixtureService', what: 'the fixture service', isStartLine: isServiceLine, shape: '{"url", "token"}',
  });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= child.stop());
  return { url: child.line.url, token: child.line.token, pid: child.pid, close, [Symbol.asyncDispose]: close };
}

/** The service fixture() uses when it is given none: one per process, started on first use. */
let shared: Promise<FixtureService> | undefined;
function sharedService(): Promise<FixtureService> {
  shared ??= startFixtureService().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

// ---- inputs and history

/** Who sends an input; absent, the fixture's test user. */
export type Author = api.Author;

/** An input of a call, or an array of them: a batch, which meets in one turn. */
export type Input = api.InputItem | api.InputItem[];

/** Options of a person's input. */
export interface InputOptions {
  by?: Author;
  /** A Slack input in the test user's DM with the agent. */
  dm?: boolean;
}

function person(kind: 'slackMention' | 'slackThreadMessage' | 'webMessage', text: string, o: InputOptions = {}): api.InputItem {
  const it: api.InputItem = { kind, text };
  if (o.by) it.by = o.by;
  if (o.dm) it.dm = true;
  return it;
}

/** A person mentioning the agent in a Slack channel (a signed app_mention and message). As a history item, an earlier mention. */
export const slackMention = (text: string, o?: InputOptions): api.InputItem & { kind: 'slackMention' } =>
  person('slackMention', text, o) as api.InputItem & { kind: 'slackMention' };
/** A message in the conversation's Slack thread, without a mention. */
export const slackThreadMessage = (text: string, o?: InputOptions): api.InputItem & { kind: 'slackThreadMessage' } =>
  person('slackThreadMessage', text, o) as api.InputItem & { kind: 'slackThreadMessage' };
/** A message of a web conversation. */
export const webMessage = (text: string, o?: InputOptions): api.InputItem & { kind: 'webMessage' } =>
  person('webMessage', text, o) as api.InputItem & { kind: 'webMessage' };
/** The scheduler's heartbeat: run starts the conversation the due automation started. */
export const heartbeat = (): api.InputItem => ({ kind: 'heartbeat' });
/** The user completes the provider's authorization: the OAuth callback. */
export const completeAuth = (provider: string): api.InputItem => ({ kind: 'completeAuth', provider });
/** A GitHub webhook, signed as GitHub signs it. */
export const githubWebhook = (event: string, payload: unknown): api.InputItem => ({ kind: 'githubWebhook', event, payload });
/** Another source's event, through the app's event route. */
export const event = (source: string, type: string, resource: string, payload: unknown): api.InputItem =>
  ({ kind: 'event', source, type, resource, payload });

/** A history item: an earlier input (slackMention, slackThreadMessage, webMessage), a reply, or a recorded file. */
export type HistoryItem = api.HistoryItem;

/** A reply of the agent in history; fork(item) cuts at this very item once it was loaded. */
export const reply = (text: string, o: { tools?: api.ToolUse[] } = {}): api.HistoryItem & { kind: 'reply' } =>
  (o.tools ? { kind: 'reply', text, tools: o.tools } : { kind: 'reply', text });

/** A recorded-history file (Junior's RecordedConversation), loaded as a fork copies rows. A relative path is from this process's directory. */
export const recorded = (path: string): api.HistoryItem => ({ kind: 'recorded', path: resolvePath(path) });

/** A reply of the recording a conversation was loaded from, for fork: by its place among the recording's replies (from 1), by text it holds, or both. */
export const recordedReply = (at: { position?: number; containing?: string }): api.ForkPoint => ({ kind: 'recordedReply', ...at });

/** The criteria a judge scores a call's replies by. */
export const rubric = (r: { pass?: string[]; fail?: string[] }): api.Rubric => ({ pass: r.pass ?? [], fail: r.fail ?? [] });

/** Where fork cuts: a reply of a call, a loaded reply(...) item, or a recordedReply(...). */
export type ForkAt = api.Reply | (api.HistoryItem & { kind: 'reply' }) | api.ForkPoint;

// ---- the app

/** An app the test starts itself, in this process: where it serves, and how to stop it. */
export interface AttachedApp {
  /** Its base URL, on loopback. */
  url: string;
  close(): unknown;
}

/**
 * An agent app, as the fixture drives it: either a command the fixture
 * runs (any language) or an app this test starts itself (attach), and its
 * routes, secrets and the agent options it takes.
 */
export interface App extends Omit<api.App, 'command' | 'attach' | 'routes'> {
  /** The command that starts it as a process (with addrEnv). */
  command?: string[];
  /**
   * Starts the app in this process with the environment the fixture hands
   * it (DATABASE_URL, the proxy's HTTPS_PROXY and CA, env, the options'
   * variables) and its typed options. Its outbound HTTP must go through
   * that proxy (useProxy, or a dispatcher of its own).
   */
  attach?: (env: Record<string, string>, options: api.AgentOptions) => Promise<AttachedApp>;
  /**
   * The app's own word that nothing is queued or running, for an app
   * without an idle route: the fixture asks it as it would ask that route.
   */
  idle?: () => boolean | Promise<boolean>;
  routes: api.Routes;
}

/** How fixture() sets up a test. */
export interface FixtureOptions {
  /** The test's name, for reports and messages (default the app's name). */
  name?: string;
  /** The scripted model answers the model (script it with fixture.model). */
  scriptedModel?: boolean;
  /** Where the model and web recordings are (a relative dir is from this process's directory) and the mode. */
  recordings?: { dir?: string; mode?: 'auto' | 'replay' | 'record' | 'passthrough' };
  /** More origins the agent may reach. */
  allow?: string[];
  /** How long a call waits for the agent to be idle (default 60000). */
  idleTimeoutMs?: number;
  /** Write reports (JSON per conversation, transcript.html) under this directory, in one named for the test. */
  reports?: string;
  /** The typed agent options the app starts with. */
  agent?: api.AgentOptions;
  /** The service; default one per process, started on first use. */
  service?: FixtureService;
  /** Called with each call's conversation as the call returns, with what the call sent and how long it took (the vitest fixture records them on task.meta). */
  onCall?: (conversation: Conversation, call: CallRecord) => void;
}

// ---- errors

/**
 * FixtureError is a fixture that failed: a call that did not complete, a
 * setup call the app refused, failures left at close, or a request the
 * service refused. failures are the fixture's, in order, as a Go test
 * would report them; timeout says a call waited past its idle timeout.
 */
export class FixtureError extends Error {
  readonly status: number;
  readonly failures: string[];
  readonly timeout: boolean;
  /** What the fixture logged (the app's output, when it failed). */
  readonly logs: string[];

  constructor(message: string, o: { status?: number; failures?: string[]; timeout?: boolean; logs?: string[] } = {}) {
    const extra = (o.failures ?? []).length > 1 ? '\n' + o.failures!.map((f) => `  - ${f}`).join('\n') : '';
    const logs = (o.logs ?? []).length > 0 ? '\n' + o.logs!.join('\n') : '';
    super(`agentvcr: ${message}${extra}${logs}`);
    this.name = 'FixtureError';
    this.status = o.status ?? 0;
    this.failures = o.failures ?? [];
    this.timeout = o.timeout ?? false;
    this.logs = o.logs ?? [];
  }
}

// ---- calls

/** What a progress handler may do while the agent waits. */
export interface ProgressActions {
  /** Posts an input to the call's conversation through its route; resolves when the app has it. */
  send(input: api.InputItem): Promise<void>;
}

/** Options of run and continue. */
export interface CallOptions {
  /** Earlier conversation, loaded as stored rows before the input (run: the first item makes the conversation). */
  history?: api.HistoryItem[];
  /** Judge the call's replies (rubric(...)). */
  criteria?: api.Rubric;
  /** Called at each model request, tool request, Slack reply and paused turn of the call; the agent waits until it resolves. A throw fails the fixture. */
  onProgress?: (progress: api.Progress, actions: ProgressActions) => unknown;
}

/** A conversation, with what the call that returned it did. */
export interface Conversation extends api.Conversation {
  /** The texts of the call's replies. */
  readonly replyTexts: string[];
  /** Sends the next input of the conversation, from its current state. */
  continue(input: Input, options?: CallOptions): Promise<Conversation>;
  /** Forks the conversation at a reply, through the app's fork route. */
  fork(at: ForkAt): Promise<Conversation>;
}

/** An instance of the app: the fixture, or another started by agent(options). */
export interface AgentInstance {
  /** The fixture's id at the service. */
  readonly id: string;
  /** The app's base URL. */
  readonly appUrl: string;
  /** Sends input as the first of a new conversation and resolves, once the agent is idle, with what it did. */
  run(input: Input, options?: CallOptions): Promise<Conversation>;
  /** Starts another instance of the app, on the same database, proxy and model, with options over this one's. */
  agent(options: api.AgentOptions): Promise<AgentInstance>;
}

/** A test's fixture: its app, the proxy with the scripted model and Slack mock, and its database. */
export interface Fixture extends AgentInstance, AsyncDisposable {
  /** The scripted model (scriptedModel: true). */
  readonly model: ScriptedModel;
  /** The Slack mock. */
  readonly slack: SlackControl;
  /** The fixture's proxy's control API. */
  readonly control: Control;
  /** Every conversation a call of the test returned, in order. */
  readonly conversations: Conversation[];
  insertScheduledAutomation(a: api.ScheduledAutomation): Promise<void>;
  insertEventAutomation(id: string, task: string, on: api.EventFilter): Promise<void>;
  insertWatch(conversation: { id: string }, on: api.EventFilter, intent: string): Promise<void>;
  insertMemory(m: api.Memory): Promise<void>;
  insertCredential(c: api.Credential): Promise<void>;
  /** The next model request fails as a provider's error. */
  rejectNextModelRequest(): Promise<void>;
  /** The next call of a Slack method fails with an error code. */
  queueSlackError(method: string, code: string): Promise<void>;
  /** The next call of a Slack method is rate limited. */
  queueSlackRateLimit(method: string, retryAfterMs: number): Promise<void>;
  /** Every model request of the test so far (the judges' too), with usage and cost. */
  modelRequests(): Promise<api.ModelRequest[]>;
  /** Ends the fixture: the attached apps stop, then the service ends it; rejects with the failures left. */
  close(): Promise<void>;
}

/** The HTTP side: calls to the service with its token. */
class Client {
  readonly #url: string;
  readonly #token: string;
  readonly dispatcher = new Agent({ connect: { timeout: 10_000 }, keepAliveTimeout: 4_000 });

  constructor(url: string, token: string) {
    this.#url = url;
    this.#token = token;
  }

  async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, ok: number[] = [200, 201, 204]): Promise<T> {
    const res = await request(this.#url + path, {
      method,
      dispatcher: this.dispatcher,
      headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (!ok.includes(res.statusCode)) throw errorOf(`${method} ${path}`, res.statusCode, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** stream POSTs a call and yields its lines as they come. */
  async *stream(path: string, body: unknown): AsyncGenerator<api.CallLine> {
    const res = await request(this.#url + path, {
      method: 'POST',
      dispatcher: this.dispatcher,
      headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.statusCode !== 200) throw errorOf(`POST ${path}`, res.statusCode, await res.body.text());
    let buf = '';
    res.body.setEncoding('utf8');
    for await (const chunk of res.body) {
      buf += chunk as string;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) yield JSON.parse(line) as api.CallLine;
      }
    }
  }
}

function errorOf(route: string, status: number, text: string): FixtureError {
  let e: Partial<api.Error> = {};
  try {
    e = JSON.parse(text) as api.Error;
  } catch {
    e = { error: text.slice(0, 500) };
  }
  return new FixtureError(`${route}: ${status}: ${e.error ?? 'no error text'}`, { status, failures: e.failures, timeout: e.timeout });
}

/** A call as onCall sees it. */
export interface CallRecord {
  op: 'run' | 'continue' | 'fork';
  /** The input it sent (none for fork). */
  input?: Input;
  /** From the call's request to its result. */
  durationMs: number;
}

/** The state every instance of a test's fixture shares. */
interface Shared {
  client: Client;
  app: App;
  base: api.AgentOptions;
  failures: string[];
  conversations: Conversation[];
  attached: AttachedApp[];
  onCall?: (c: Conversation, call: CallRecord) => void;
  /** Set by close(): no call may start after it. */
  closed?: string;
}

/**
 * fixture starts, for one test, a database, the proxy (Slack mocked) and
 * the app behind it, through the fixture service, and resolves once the
 * app serves. close() (or `await using`) ends it; failures that did not
 * end a call (an unscripted prompt, a script never used) are thrown then.
 *
 *   await using f = await fixture(app, { scriptedModel: true });
 *   const conversation = await f.run(slackMention('did deploy 42 go out?'));
 */
export async function fixture(app: App, options: FixtureOptions = {}): Promise<Fixture> {
  const service = options.service ?? (await sharedService());
  const client = new Client(service.url, service.token);
  let idleServer: Server | undefined;
  const routes = { ...app.routes };
  if (app.idle) {
    if (!app.attach) throw new FixtureError(`app ${app.name}: an idle callback is for an app this test starts itself (attach)`);
    idleServer = await serveIdle(app.idle, app.adminSecret);
    routes.idle = `http://127.0.0.1:${(idleServer.address() as AddressInfo).port}/idle`;
  }
  const { attach: _attach, idle: _idle, ...rest } = app;
  const spec: api.FixtureSpec = {
    name: options.name ?? app.name,
    app: { ...rest, routes, attach: app.attach !== undefined },
    scriptedModel: options.scriptedModel ?? false,
  };
  if (options.recordings) spec.recordings = { ...options.recordings, dir: options.recordings.dir && resolvePath(options.recordings.dir) };
  if (options.allow) spec.allow = options.allow;
  if (options.idleTimeoutMs) spec.idleTimeoutMs = options.idleTimeoutMs;
  if (options.reports) spec.reports = resolvePath(options.reports);
  if (options.agent) spec.agent = options.agent;
  const sh: Shared = { client, app, base: options.agent ?? {}, failures: [], conversations: [], attached: [], onCall: options.onCall };
  let started: api.Started;
  try {
    started = await startUp(sh, client.call<api.Started>('POST', '/v1/fixtures', spec), sh.base);
  } catch (err) {
    idleServer?.close();
    throw err;
  }
  const control = new Control(`${service.url}/v1/fixtures/${started.id}/control`, service.token);
  const root = instance(sh, started);
  const setup = async (path: string, body: unknown) => {
    if (sh.closed) throw new FixtureError(sh.closed);
    const r = await client.call<api.Failures>('POST', `/v1/fixtures/${started.id}/${path}`, body);
    sh.failures.push(...r.failures);
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      sh.closed = `fixture ${spec.name} is closed: make a new one (fixture(), or the vitest fixture per test)`;
      const errors: unknown[] = [];
      for (const a of sh.attached.reverse()) {
        try {
          await a.close();
        } catch (err) {
          errors.push(err);
        }
      }
      let ended: api.Ended | undefined;
      try {
        ended = await client.call<api.Ended>('DELETE', `/v1/fixtures/${started.id}`);
      } catch (err) {
        errors.push(err);
      }
      idleServer?.close();
      await control.close();
      await client.dispatcher.close();
      const failures = [...sh.failures, ...(ended?.failures ?? [])];
      if (failures.length > 0) {
        throw new FixtureError(`fixture ${spec.name} failed: ${failures[failures.length - 1]}`, { failures, logs: ended?.logs });
      }
      if (errors.length > 0) throw errors[0];
    })());
  return {
    ...root,
    model: control.model,
    slack: control.slack,
    control,
    conversations: sh.conversations,
    insertScheduledAutomation: (a) => setup('scheduled-automations', a),
    insertEventAutomation: (id, task, on) => setup('event-automations', { id, task, on }),
    insertWatch: (c, on, intent) => setup('watches', { conversationId: c.id, on, intent }),
    insertMemory: (m) => setup('memories', m),
    insertCredential: (c) => setup('credentials', c),
    rejectNextModelRequest: () => setup('faults', { kind: 'rejectNextModelRequest' }),
    queueSlackError: (method, code) => setup('faults', { kind: 'slackError', method, code }),
    queueSlackRateLimit: (method, retryAfterMs) => setup('faults', { kind: 'slackRateLimit', method, retryAfterMs }),
    modelRequests: async () => (await client.call<api.Fixture>('GET', `/v1/fixtures/${started.id}`)).modelRequests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * startUp finishes a start-up (create, or agent): when the app is the
 * test's to start, it starts it with the environment the service hands
 * over and attaches it.
 */
async function startUp(sh: Shared, answer: Promise<api.Started>, options: api.AgentOptions): Promise<api.Started> {
  const started = await answer;
  sh.failures.push(...(started.failures ?? []));
  if (!started.start) return started;
  const { id, env } = started.start;
  let app: AttachedApp;
  try {
    app = await sh.app.attach!(env, options);
  } catch (err) {
    await sh.client.call('POST', `/v1/starts/${id}`, { error: String((err as Error)?.message ?? err) }, [200, 422]).catch(() => {});
    throw new FixtureError(`app ${sh.app.name} did not start: ${String((err as Error)?.message ?? err)}`, { failures: [] });
  }
  sh.attached.push(app);
  const done = await sh.client.call<api.Started>('POST', `/v1/starts/${id}`, { url: app.url });
  sh.failures.push(...(done.failures ?? []));
  return done;
}

/** over is base with each option o sets set as o sets it (limits one by one). */
function over(base: api.AgentOptions, o: api.AgentOptions): api.AgentOptions {
  const merged: api.AgentOptions = { ...base, ...o };
  if (base.limits || o.limits) merged.limits = { ...base.limits, ...o.limits };
  return merged;
}

function instance(sh: Shared, started: api.Started, options: api.AgentOptions = sh.base): AgentInstance {
  const id = started.id;
  return {
    id,
    appUrl: started.appUrl ?? '',
    run: (input, o) => call(sh, id, 'run', { input, ...callBody(o) }, o),
    agent: async (o) => {
      const merged = over(options, o);
      const s = await startUp(sh, sh.client.call<api.Started>('POST', `/v1/fixtures/${id}/agents`, o), merged);
      return instance(sh, s, merged);
    },
  };
}

function callBody(o: CallOptions = {}): Partial<api.CallSpec> {
  const body: Partial<api.CallSpec> = {};
  if (o.history) body.history = o.history.map((h) => (h.kind === 'recorded' && h.path ? { ...h, path: resolvePath(h.path) } : h));
  if (o.criteria) body.criteria = o.criteria;
  if (o.onProgress) body.progress = true;
  return body;
}

/** call runs one call: it reads the stream, answers its progress events, and returns its conversation. */
async function call(sh: Shared, id: string, op: 'run' | 'continue' | 'fork', body: api.CallSpec, o: CallOptions = {}): Promise<Conversation> {
  if (sh.closed) throw new FixtureError(sh.closed);
  const began = performance.now();
  let callId = '';
  const handlers: Promise<void>[] = [];
  let last: api.CallLine | undefined;
  for await (const line of sh.client.stream(`/v1/fixtures/${id}/${op}`, body)) {
    if ('call' in line) {
      callId = line.call;
    } else if ('progress' in line) {
      const p = line.progress;
      const cid = callId;
      // Each event runs on its own: the agent may wait at two at once.
      handlers.push((async () => {
        let error: string | undefined;
        try {
          await o.onProgress?.(p, {
            send: async (input) => {
              await sh.client.call('POST', `/v1/calls/${cid}/send`, { input });
            },
          });
        } catch (err) {
          error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        }
        // The call may be over (its result already sent): nothing waits.
        await sh.client.call('POST', `/v1/calls/${cid}/progress/${p.id}`, error ? { error } : {}, [204, 404]);
      })());
    } else {
      last = line;
    }
  }
  // A handler still running once the call is over is not waited for: the
  // agent no longer waits for it either (its answer finds the call gone).
  void Promise.allSettled(handlers);
  if (!last) throw new FixtureError(`${op}: the service's answer ended without a result`);
  if ('result' in last) {
    sh.failures.push(...last.failures);
    const c = conversation(sh, id, last.result);
    sh.conversations.push(c);
    sh.onCall?.(c, { op, input: body.input as Input | undefined, durationMs: performance.now() - began });
    return c;
  }
  const e = last as api.Error;
  throw new FixtureError(e.error, { failures: e.failures, timeout: e.timeout });
}

function conversation(sh: Shared, fixtureId: string, r: api.Conversation): Conversation {
  return {
    ...r,
    replyTexts: r.replies.map((x) => x.text),
    continue: (input, o) => call(sh, fixtureId, 'continue', { conversationId: r.id, input, ...callBody(o) }, o),
    fork: (at) => call(sh, fixtureId, 'fork', { conversationId: r.id, at: forkPoint(at) }),
  };
}

function forkPoint(at: ForkAt): api.ForkPoint {
  if ('messageId' in at && at.messageId && !('kind' in at && at.kind)) return { messageId: at.messageId };
  return at as api.ForkPoint;
}

/** serveIdle answers the fixture's idle questions from the test's callback, on loopback. */
async function serveIdle(idle: () => boolean | Promise<boolean>, adminSecret: string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    if (adminSecret && req.headers.authorization !== `Bearer ${adminSecret}`) {
      res.writeHead(401).end();
      return;
    }
    Promise.resolve()
      .then(idle)
      .then(
        (v) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ idle: v === true })),
        (err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ idle: false, error: String(err) })),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  server.unref();
  return server;
}
