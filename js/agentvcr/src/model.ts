// The scripted model (docs/proxy.md#the-scripted-model) in Guren's shape:
// respond(agent, ['text' | {output} | {toolCalls, then} | ...]), calls,
// and loud assertions on what the agent was asked.
import type { Transport } from './control.js';
import type {
  FakeAgent,
  FakeCalls,
  FakeEmbedding,
  FakeImageCall,
  FakePrompt,
  FakeResponse,
  FakeResponseOutput,
  FakeResponseProviderError,
  FakeResponseText,
  FakeResponseToolCalls,
  FakeResponseTruncated,
} from './openapi.js';

/** Which agent a script answers: a FakeAgent (name plus matchers) or just a name (matches any prompt). */
export type AgentRef = FakeAgent | string;

/** An answer of the API's FakeResponse shape whose `then` may be a ScriptAnswer. */
interface ThenAnswer {
  then?: ScriptAnswer;
}
/** {text}: answer with text. */
export interface TextAnswer extends Omit<FakeResponseText, 'then'>, ThenAnswer {}
/** {output}: structured output, checked against the request's JSON schema. */
export interface OutputAnswer extends Omit<FakeResponseOutput, 'then'>, ThenAnswer {}
/** {toolCalls: [{name, input}], then}: ask for tools; `then` answers the prompt carrying their results. */
export interface ToolCallsAnswer extends Omit<FakeResponseToolCalls, 'then'>, ThenAnswer {}
/** {truncated}: text cut at the token limit. */
export interface TruncatedAnswer extends Omit<FakeResponseTruncated, 'then'>, ThenAnswer {}
/** {providerError: status}: the provider's error of that status. */
export interface ProviderErrorAnswer extends Omit<FakeResponseProviderError, 'then'>, ThenAnswer {}

/**
 * One scripted answer: a string is {text}; otherwise one of {text},
 * {output}, {toolCalls: [{name, input}], then}, {truncated},
 * {providerError: status}; a `then` may be a string too.
 */
export type ScriptAnswer =
  | string
  | TextAnswer
  | OutputAnswer
  | ToolCallsAnswer
  | TruncatedAnswer
  | ProviderErrorAnswer;

/** What assertPrompted matches: a substring of the prompt (system, messages, tool results) or a predicate on it. */
export type PromptMatcher = string | ((prompt: FakePrompt) => boolean);

/**
 * A script handle: disposing it (`await using`, or
 * [Symbol.asyncDispose]()) throws when its answers went unused.
 */
export interface Script extends AsyncDisposable {
  /** The agent's name. */
  readonly agent: string;
  /** Throws when some of this script's answers were never asked for. */
  assertUsed(): Promise<void>;
}

const expectedOf = new WeakMap<ScriptedModel, Map<string, number>>();

/**
 * Internal (Control.endScope): a scope's end drops the answers left
 * unused, so the next script counts from the calls made, not from them.
 */
export function forgetQueued(m: ScriptedModel): void {
  expectedOf.get(m)?.clear();
}

function normalize(a: ScriptAnswer): FakeResponse {
  if (typeof a === 'string') return { text: a };
  if (a.then === undefined) return a as FakeResponse;
  return { ...a, then: normalize(a.then) } as FakeResponse;
}

/** The number of prompts a response answers: itself and each `then`. */
function depth(r: FakeResponse): number {
  return 1 + (r.then ? depth(r.then) : 0);
}

function agentOf(a: AgentRef): FakeAgent {
  return typeof a === 'string' ? { name: a } : a;
}

function promptText(p: FakePrompt): string {
  return [p.system, ...p.messages.map((m) => m.text), ...(p.results ?? []).map((r) => r.content)].join('\n');
}

function describe(p: FakePrompt): string {
  const last = p.messages.at(-1);
  const s = (x: string) => JSON.stringify(x.length > 160 ? x.slice(0, 160) + '…' : x);
  return `system ${s(p.system)}; ${p.messages.length} message(s), last ${last ? `${last.role}: ${s(last.text)}` : 'none'}`;
}

/**
 * ScriptedModel scripts the proxy's fake model (fakeModel: true) and reads
 * what the agent asked it. Get it as proxy.control.model.
 */
export class ScriptedModel {
  readonly #t: Transport;
  /** Per agent: the number of exchanges after which every script so far is used. */
  readonly #expected = new Map<string, number>();

  /** Internal: made by Control. */
  constructor(t: Transport) {
    this.#t = t;
    expectedOf.set(this, this.#expected);
  }

  /**
   * Queues answers for an agent's next prompts, in order (a `then` answers
   * the prompt carrying its tool calls' results). The returned Script's
   * dispose throws when they went unused; the scope's end fails too.
   */
  async respond(agent: AgentRef, responses: ScriptAnswer[]): Promise<Script> {
    const a = agentOf(agent);
    const rs = responses.map(normalize);
    const before = this.#expected.get(a.name) ?? (await this.calls(a.name)).calls.length;
    await this.#t.call<void>('POST', '/v1/fakeai/respond', { agent: a, responses: rs });
    const end = before + rs.reduce((n, r) => n + depth(r), 0);
    this.#expected.set(a.name, end);
    const assertUsed = async () => {
      const got = (await this.calls(a.name)).calls.length;
      if (got < end) {
        throw new Error(
          `agentvcr: agent ${JSON.stringify(a.name)}: ${end - got} scripted answer(s) never asked for ` +
            `(the agent made ${got} of ${end} model calls so far; did it stop early, or is the script ahead of it?):\n` +
            rs.map((r) => `  - ${JSON.stringify(r)}`).join('\n'),
        );
      }
    };
    return { agent: a.name, assertUsed, [Symbol.asyncDispose]: assertUsed };
  }

  /** Every prompt the agent sent and what it was answered (all agents when none is given), with failures. */
  calls(agent?: AgentRef): Promise<FakeCalls> {
    const name = agent === undefined ? undefined : agentOf(agent).name;
    return this.#t.call<FakeCalls>('GET', '/v1/fakeai/calls' + (name ? `?agent=${encodeURIComponent(name)}` : ''));
  }

  /** Throws, listing the prompts it did get, unless the agent was sent a prompt that matches. */
  async assertPrompted(agent: AgentRef, match: PromptMatcher): Promise<void> {
    const name = agentOf(agent).name;
    const prompts = (await this.calls(name)).calls.map((c) => c.prompt);
    if (prompts.some(matcher(match))) return;
    throw new Error(
      `agentvcr: agent ${JSON.stringify(name)} was never prompted with ${what(match)}; ` +
        (prompts.length ? `its ${prompts.length} prompt(s):\n${prompts.map((p) => `  - ${describe(p)}`).join('\n')}` : 'it got no prompts at all'),
    );
  }

  /** Throws, naming the prompt, when the agent was sent a prompt that matches. */
  async assertNotPrompted(agent: AgentRef, match: PromptMatcher): Promise<void> {
    const name = agentOf(agent).name;
    const prompts = (await this.calls(name)).calls.map((c) => c.prompt);
    const i = prompts.findIndex(matcher(match));
    if (i < 0) return;
    throw new Error(
      `agentvcr: agent ${JSON.stringify(name)} was prompted with ${what(match)} (prompt ${i + 1} of ${prompts.length}): ${describe(prompts[i]!)}`,
    );
  }

  /** Throws, listing them, when the agent was sent any prompt. */
  async assertNeverPrompted(agent: AgentRef): Promise<void> {
    const name = agentOf(agent).name;
    const prompts = (await this.calls(name)).calls.map((c) => c.prompt);
    if (!prompts.length) return;
    throw new Error(
      `agentvcr: agent ${JSON.stringify(name)} was expected never to be prompted, but got ${prompts.length} prompt(s):\n` +
        prompts.map((p) => `  - ${describe(p)}`).join('\n'),
    );
  }

  /** Queues the vectors for the next embeddings request (one per input value). */
  async respondEmbeddings(vectors: number[][]): Promise<void> {
    await this.#t.call<void>('POST', '/v1/fakeai/embeddings', { vectors });
  }

  /** Queues the images (base64 strings, or bytes) for the next image request. */
  async respondImages(images: (string | Uint8Array)[]): Promise<void> {
    const b64 = images.map((i) => (typeof i === 'string' ? i : Buffer.from(i).toString('base64')));
    await this.#t.call<void>('POST', '/v1/fakeai/images', { images: b64 });
  }

  /** The embeddings requests and the vectors given. */
  embeddings(): Promise<FakeEmbedding[]> {
    return this.#t.call<FakeEmbedding[]>('GET', '/v1/fakeai/embeddings');
  }

  /** The image requests and the images given. */
  images(): Promise<FakeImageCall[]> {
    return this.#t.call<FakeImageCall[]>('GET', '/v1/fakeai/images');
  }

  /** Forgets every script, call and failure (ControlError 409 while a scope is open). */
  async reset(): Promise<void> {
    await this.#t.call<void>('DELETE', '/v1/fakeai');
    this.#expected.clear();
  }
}

function matcher(m: PromptMatcher): (p: FakePrompt) => boolean {
  return typeof m === 'string' ? (p) => promptText(p).includes(m) : m;
}

function what(m: PromptMatcher): string {
  return typeof m === 'string' ? JSON.stringify(m) : `a prompt matching ${m.name || 'the predicate'}`;
}
