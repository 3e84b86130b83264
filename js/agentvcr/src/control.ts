// The typed client of the proxy's control API (docs/proxy.md#control-api):
// scopes, stats, in-flight requests, progress events and holds, faults, the
// Slack mock and the scripted model, over loopback HTTP with the bearer
// token. Its bodies' types come from the generated openapi.ts.
import { Agent, Client, request } from 'undici';
import type { Dispatcher } from 'undici';
import { openEvents, subscribe } from './events.js';
import type { EventStream, EventsOptions, ProgressHandler, OnProgressOptions, Subscription } from './events.js';
import { ScriptedModel, forgetQueued } from './model.js';
import type {
  Fault,
  FaultRequest,
  InFlight,
  MissReport,
  ScopeFailure,
  ScopeResult,
  SlackCalls,
  SlackMessage,
  SlackSeed,
  SlackSeeded,
  Stats,
} from './openapi.js';

/**
 * ControlError is a control API call that failed: the proxy answered with
 * an error status (status, and its error text), or could not be reached
 * (status 0). route names the call, as "POST /v1/scopes".
 */
export class ControlError extends Error {
  /** The HTTP status; 0 when the control API could not be reached. */
  readonly status: number;
  /** The proxy's error text (its {"error"} body), or why it was unreachable. */
  readonly error: string;
  /** The call, as "METHOD /path". */
  readonly route: string;

  constructor(route: string, status: number, error: string, options?: { cause?: unknown }) {
    super(status === 0 ? `agentvcr control ${route}: ${error}` : `agentvcr control ${route}: ${status}: ${error}`, options);
    this.name = 'ControlError';
    this.status = status;
    this.error = error;
    this.route = route;
  }
}

/**
 * ScopeFailedError is endScope's 422: the scope counts as failed whatever
 * the test said (an unknown Slack method, an unscripted prompt, scripted
 * answers left unused), and its recordings were dropped. Its fields are
 * the API's ScopeFailure.
 */
export class ScopeFailedError extends ControlError implements ScopeFailure {
  readonly missed: number;
  readonly recorded: number;
  readonly dropped: number;
  /** Slack methods the agent called that the mock does not know. */
  readonly unknownSlack: string[];
  /** Prompts (and embeddings and images) no script answered. */
  readonly unscripted: string[];
  /** Scripted answers nobody asked for; they were dropped. */
  readonly unused: string[];

  constructor(route: string, scope: string, failure: ScopeFailure) {
    super(route, 422, failure.error);
    this.name = 'ScopeFailedError';
    this.message = scopeFailureMessage(scope, failure);
    this.missed = failure.missed;
    this.recorded = failure.recorded;
    this.dropped = failure.dropped;
    this.unknownSlack = failure.unknownSlack ?? [];
    this.unscripted = failure.unscripted ?? [];
    this.unused = failure.unused ?? [];
  }
}

function scopeFailureMessage(scope: string, f: ScopeFailure): string {
  const lines = [`agentvcr: scope ${JSON.stringify(scope)} failed: ${f.error}`];
  const list = (what: string, items: string[] | undefined, fix: string) => {
    if (!items?.length) return;
    lines.push(`  ${what} (${fix}):`);
    for (const item of items) lines.push(`    - ${item}`);
  };
  list('unscripted prompts', f.unscripted, 'script them with proxy.control.model.respond');
  list('scripted answers never asked for', f.unused, 'the agent stopped early, or the script is wrong');
  list('Slack methods the mock does not know', f.unknownSlack, 'see docs/proxy.md#the-slack-mock');
  lines.push(`  its ${f.dropped} new recording(s) were dropped`);
  return lines.join('\n');
}

/** Options of a Control beyond its URL and token. */
export interface ControlOptions {
  /**
   * Says why the control API may be unreachable (such as "the proxy exited
   * with code 1"), added to the error of a call that could not connect.
   */
  diagnose?: () => string | undefined;
}

/** What waitIdle waits with. */
export interface WaitIdleOptions {
  /** Give up after this long, with an Error naming what is still in flight (default 10000). */
  timeoutMs?: number;
  /** Poll GET /v1/inflight this often (default 10). */
  intervalMs?: number;
}

/** The fault options every kind takes: which requests it applies to, how many times. */
export type FaultTarget = Pick<FaultRequest, 'route' | 'method' | 'path' | 'times'>;

/** The Slack mock's part of the control API (docs/proxy.md#the-slack-mock). */
export interface SlackControl {
  /** Seeds users, channels, messages and followed threads; answers the messages as stored (with their ts). */
  seed(seed: SlackSeed): Promise<SlackSeeded>;
  /** Queues an error for the method's next call: {"ok":false,"error"} or, for "ratelimited", a 429 with Retry-After. */
  error(method: string, error: string, opts?: { retryAfterMs?: number; extra?: Record<string, unknown> }): Promise<void>;
  /** Rate-limits the method's next call: 429 with Retry-After. */
  rateLimit(method: string, retryAfterMs: number): Promise<void>;
  /** The calls the mock answered (of one method when given) and the unknown methods called. */
  calls(method?: string): Promise<SlackCalls>;
  /** A channel's messages as the mock keeps them. */
  messages(channel: string): Promise<SlackMessage[]>;
}

/** Internal: how events.ts and model.ts call the control API. */
export interface Transport {
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Opens a long-lived GET on a connection of its own; destroy() drops that connection. */
  open(path: string, signal: AbortSignal): Promise<{ res: Dispatcher.ResponseData; destroy(): void }>;
  fail(route: string, status: number, body: string): ControlError;
  /** Why the proxy may be gone, if known. */
  diagnose(): string | undefined;
}

/**
 * Control drives one proxy through its control API. It uses its own
 * undici Agent, so that a global dispatcher that sends this process's
 * traffic through the proxy (useProxy) never carries control calls.
 */
export class Control {
  /** The control API's base URL, as http://127.0.0.1:PORT. */
  readonly url: string;
  /** The Slack mock: seed it, queue its errors, read what the agent did. */
  readonly slack: SlackControl;
  /** The scripted model (a proxy started with fakeModel: true). */
  readonly model: ScriptedModel;

  readonly #token: string;
  readonly #agent: Agent;
  readonly #diagnose: (() => string | undefined) | undefined;
  readonly #streams = new Set<{ close(): void }>();
  /** The event streams' connections, each with its destroy() once called. */
  readonly #streamClients = new Map<Client, Promise<void> | undefined>();
  #progressErrors: Error[] = [];
  readonly #transport: Transport;

  /** Makes a client of the control API at controlUrl (the start line's "control") with its token. */
  constructor(controlUrl: string, token: string, options: ControlOptions = {}) {
    this.url = controlUrl.replace(/\/+$/, '');
    this.#token = token;
    this.#diagnose = options.diagnose;
    this.#agent = new Agent({ connect: { timeout: 10_000 }, keepAliveTimeout: 4_000 });
    this.#transport = {
      call: (method, path, body) => this.#call(method, path, body),
      open: (path, signal) => this.#open(path, signal),
      fail: (route, status, body) => errorOf(route, status, body),
      diagnose: () => this.#diagnose?.(),
    };
    const t = this.#transport;
    this.slack = {
      seed: (seed) => t.call<SlackSeeded>('POST', '/v1/slack/seed', seed),
      error: (method, error, opts = {}) => t.call<void>('POST', '/v1/slack/errors', { method, error, ...opts }),
      rateLimit: (method, retryAfterMs) =>
        t.call<void>('POST', '/v1/slack/errors', { method, error: 'ratelimited', retryAfterMs }),
      calls: (method) =>
        t.call<SlackCalls>('GET', '/v1/slack/calls' + (method ? `?method=${encodeURIComponent(method)}` : '')),
      messages: (channel) =>
        t.call<SlackMessage[]>('GET', `/v1/slack/channels/${encodeURIComponent(channel)}/messages`),
    };
    this.model = new ScriptedModel(t);
  }

  // ---- scopes

  /** Opens a test scope: its new recordings are kept in memory until endScope. 409 (ControlError) when one is open. */
  async beginScope(name: string): Promise<void> {
    await this.#call('POST', '/v1/scopes', { name });
  }

  /**
   * Ends the open scope, writing its recordings if passed. Throws
   * ScopeFailedError (422) when the scope failed whatever the test said:
   * unknown Slack methods, unscripted prompts, unused scripted answers.
   */
  async endScope(name: string, passed: boolean): Promise<ScopeResult> {
    const path = `/v1/scopes/${encodeURIComponent(name)}/end`;
    try {
      return await this.#call<ScopeResult>('POST', path, { passed });
    } catch (err) {
      if (err instanceof ControlError && err.status === 422 && failureOf(err)) {
        throw new ScopeFailedError(err.route, name, failureOf(err)!);
      }
      throw err;
    } finally {
      forgetQueued(this.model);
    }
  }

  /** The proxy's counts by outcome (replayed, recorded, missed, ...). */
  stats(): Promise<Stats> {
    return this.#call<Stats>('GET', '/v1/stats');
  }

  /** The replay misses so far, each with the nearest recording and the parts that differ. */
  misses(): Promise<MissReport[]> {
    return this.#call<MissReport[]>('GET', '/v1/misses');
  }

  /** The requests the proxy has not finished, oldest first. */
  inflight(): Promise<InFlight> {
    return this.#call<InFlight>('GET', '/v1/inflight');
  }

  /**
   * Waits until the agent is quiet: nothing in flight at the proxy twice in
   * a row (a request that ends may start the next). On timeout, an Error
   * naming the requests still in flight (a held one waits for release).
   */
  async waitIdle(opts: WaitIdleOptions = {}): Promise<void> {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const intervalMs = opts.intervalMs ?? 10;
    const deadline = Date.now() + timeoutMs;
    let quiet = 0;
    for (;;) {
      const now = await this.inflight();
      quiet = now.count === 0 ? quiet + 1 : 0;
      if (quiet >= 2) return;
      if (Date.now() >= deadline) {
        const what = now.requests
          .map((r) => `  ${r.method} ${r.url} (route ${r.route}, request ${r.request}, ${Math.round(r.elapsedMs)} ms)`)
          .join('\n');
        throw new Error(
          `agentvcr: waitIdle: ${now.count} request(s) still in flight after ${timeoutMs} ms ` +
            `(a held event waits for its release; a stalled stream for its delay):\n${what}`,
        );
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  // ---- progress

  /**
   * Opens the progress event stream (GET /v1/events): an async iterable of
   * events; ready resolves once the proxy has subscribed it, so that a
   * request started after it is seen. Events of the types in hold wait for
   * release(id) (or holdTimeoutMs, then the request fails with 504).
   */
  events(opts: EventsOptions = {}): EventStream {
    const stream = openEvents(this.#transport, opts);
    this.#streams.add(stream);
    stream.closed.then(() => this.#streams.delete(stream));
    return stream;
  }

  /** Releases a held event: its request goes on. ControlError 404 when no such hold is open. */
  async release(id: number): Promise<void> {
    await this.#call('POST', `/v1/events/${id}/release`);
  }

  /**
   * Calls handler for every progress event; resolves once subscribed. A
   * held event is released after the handler's promise settles, whatever
   * it did; handler errors are collected (Subscription.errors()). actions.send
   * calls opts.send, to post an input (a steering message) while the
   * request waits.
   */
  async onProgress(handler: ProgressHandler, opts: OnProgressOptions = {}): Promise<Subscription> {
    return subscribe(this, handler, opts, (err) => this.#progressErrors.push(err));
  }

  /**
   * The errors of every onProgress handler of this client since the last
   * call, and forgets them: a handler runs outside the test's own code, so
   * whoever ends the test (the vcr fixture does) fails it with these.
   */
  takeProgressErrors(): Error[] {
    const errs = this.#progressErrors;
    this.#progressErrors = [];
    return errs;
  }

  // ---- faults

  /** Queues a fault (docs/proxy.md#faults); answers its id. */
  async addFault(fault: FaultRequest): Promise<number> {
    const { id } = await this.#call<{ id: number }>('POST', '/v1/faults', fault);
    return id;
  }

  /** The queued faults. */
  faults(): Promise<Fault[]> {
    return this.#call<Fault[]>('GET', '/v1/faults');
  }

  /** Clears every queued fault. */
  async clearFaults(): Promise<void> {
    await this.#call('DELETE', '/v1/faults');
  }

  /**
   * The next model request never goes upstream: the agent gets the
   * provider's error in its dialect's shape (Anthropic 529 overloaded by
   * default; status 500 or 429; retryAfterMs sets Retry-After).
   */
  rejectNextModelRequest(opts: { status?: number; retryAfterMs?: number } & FaultTarget = {}): Promise<number> {
    return this.addFault({ kind: 'reject_model_request', ...opts });
  }

  /** The next matching response pauses after `after` SSE events, for delayMs (default 60000). */
  stallStream(opts: { after?: number; delayMs?: number } & FaultTarget = {}): Promise<number> {
    return this.addFault({ kind: 'stall_stream', ...opts });
  }

  /** The next matching response ends with an error after `after` SSE events. */
  cutStream(opts: { after?: number } & FaultTarget = {}): Promise<number> {
    return this.addFault({ kind: 'cut_stream', ...opts });
  }

  /** The API's own OpenAPI document (GET /v1/openapi.json). */
  openapi(): Promise<Record<string, unknown>> {
    return this.#call<Record<string, unknown>>('GET', '/v1/openapi.json');
  }

  /** Closes this client's event streams (their holds end) and its connections. */
  async close(): Promise<void> {
    await this.closeStreams();
    await this.#agent.close();
  }

  /** Closes this client's open event streams; the proxy ends their holds. Resolves once their connections are gone. */
  async closeStreams(): Promise<void> {
    for (const s of this.#streams) s.close();
    await Promise.all([...this.#streamClients].map(([c, gone]) => gone ?? c.destroy().catch(() => {})));
  }

  // ---- transport

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const route = `${method} ${path.replace(/\?.*/, '')}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(this.url + path, {
        method: method as Dispatcher.HttpMethod,
        dispatcher: this.#agent,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw this.#unreachable(route, err);
    }
    const text = await res.body.text();
    if (res.statusCode >= 300) throw errorOf(route, res.statusCode, text);
    if (res.statusCode === 204 || text === '') return undefined as T;
    return JSON.parse(text) as T;
  }

  async #open(path: string, signal: AbortSignal): Promise<{ res: Dispatcher.ResponseData; destroy(): void }> {
    // A connection of its own, destroyed when the stream closes: the proxy
    // sees the stream gone at once and ends its holds (a pooled connection
    // might linger, keeping the proxy's stop waiting for it).
    const client = new Client(this.url, { bodyTimeout: 0, connect: { timeout: 10_000 } });
    this.#streamClients.set(client, undefined);
    const destroy = () => {
      if (this.#streamClients.get(client)) return;
      const gone = client.destroy().catch(() => {}).finally(() => this.#streamClients.delete(client));
      this.#streamClients.set(client, gone);
    };
    signal.addEventListener('abort', destroy, { once: true });
    try {
      const res = await request(this.url + path, {
        method: 'GET',
        dispatcher: client,
        headers: { authorization: `Bearer ${this.#token}`, accept: 'text/event-stream' },
        signal,
      });
      return { res, destroy };
    } catch (err) {
      destroy();
      if (signal.aborted) throw err;
      throw this.#unreachable(`GET ${path.replace(/\?.*/, '')}`, err);
    }
  }

  #unreachable(route: string, err: unknown): ControlError {
    const why = this.#diagnose?.();
    const msg = err instanceof Error ? err.message : String(err);
    return new ControlError(
      route,
      0,
      `cannot reach the control API at ${this.url}: ${msg}` + (why ? ` (${why})` : ' (has the proxy exited?)'),
      { cause: err },
    );
  }
}

const failures = new WeakMap<ControlError, ScopeFailure>();

function failureOf(err: ControlError): ScopeFailure | undefined {
  return failures.get(err);
}

/** errorOf makes the ControlError of an error answer, keeping a 422's ScopeFailure. */
function errorOf(route: string, status: number, text: string): ControlError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const message =
    parsed && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string'
      ? (parsed as { error: string }).error
      : text.trim() || `HTTP ${status}`;
  const err = new ControlError(route, status, message);
  if (status === 422 && parsed && typeof parsed === 'object') failures.set(err, parsed as ScopeFailure);
  return err;
}
