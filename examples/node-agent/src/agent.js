// @ts-check
// The agent: one conversation per Slack thread, one turn at a time per
// conversation, a tool loop on the Anthropic Messages API, and the reply in
// the thread. A message that arrives while a turn runs steers it: it joins
// the turn's next model request, as Junior lets a user steer mid-turn.
import Anthropic from '@anthropic-ai/sdk';
import { fetchPage, fetchPageTool } from './tools.js';

/** The system prompt. */
export const SYSTEM = 'You are a helpful assistant in a Slack workspace. Answer briefly. Use fetch_page to read web pages the user asks about.';

/** The most model requests one turn makes before it gives up. */
const MAX_STEPS = 8;

/** The reaction that says the agent is working on a message. */
const THINKING = 'eyes';

/**
 * @typedef {import('./slack.js').Inbound} Inbound
 * @typedef {import('@anthropic-ai/sdk').default.MessageParam} MessageParam
 * @typedef {import('@anthropic-ai/sdk').default.ContentBlockParam} ContentBlockParam
 */

/**
 * @typedef {object} Conversation
 * @property {Inbound[]} pending messages the running turn (or the next) has not read yet
 * @property {MessageParam[]} history what the model saw in earlier turns
 * @property {boolean} running
 */

export class Agent {
  /**
   * @param {object} deps
   * @param {Anthropic} deps.anthropic
   * @param {import('@slack/web-api').WebClient} deps.slack
   * @param {string} deps.model
   * @param {(line: string) => void} deps.log
   */
  constructor({ anthropic, slack, model, log }) {
    this.anthropic = anthropic;
    this.slack = slack;
    this.model = model;
    this.log = log;
    /** @type {Map<string, Conversation>} by channel and thread */
    this.conversations = new Map();
    /** @type {Set<string>} messages taken, by channel and ts: a mention comes as app_mention and as message */
    this.seen = new Set();
    /** @type {Set<Promise<void>>} the turns running, for close() */
    this.work = new Set();
  }

  /**
   * Takes a message from Slack, synchronously: a mention or a message in a
   * thread the agent is in joins its conversation (and steers the running
   * turn); a turn starts unless one runs. The work goes on in the
   * background.
   * @param {Inbound} msg
   */
  take(msg) {
    const key = `${msg.channel}:${msg.ts}`;
    if (this.seen.has(key)) return;
    const id = `${msg.channel}:${msg.thread}`;
    let conv = this.conversations.get(id);
    if (!conv && !msg.mention) return; // a channel message not for the agent
    this.seen.add(key);
    if (!conv) {
      conv = { pending: [], history: [], running: false };
      this.conversations.set(id, conv);
    }
    conv.pending.push(msg);
    if (conv.running) this.log(`steer ${id}: ${JSON.stringify(msg.text)}`);
    else this.#start(conv);
  }

  /**
   * Runs turns while the conversation has pending messages.
   * @param {Conversation} conv
   */
  #start(conv) {
    conv.running = true;
    const p = (async () => {
      while (conv.pending.length > 0) await this.#turn(conv);
    })()
      .catch((err) => this.log(`turn failed: ${err instanceof Error ? err.stack : String(err)}`))
      .finally(() => {
        conv.running = false;
        this.work.delete(p);
      });
    this.work.add(p);
  }

  /**
   * One turn: the pending messages, the tool loop, the reply in the
   * thread. A provider error (after the SDK's retries) ends the turn with
   * a reply that says so, never silence.
   * @param {Conversation} conv
   */
  async #turn(conv) {
    const inputs = conv.pending.splice(0);
    const { channel, thread } = inputs[0];
    const last = inputs[inputs.length - 1];
    await this.#slack('reactions.add', () => this.slack.reactions.add({ channel, timestamp: last.ts, name: THINKING }));
    /** @type {MessageParam[]} */
    const messages = [...conv.history, { role: 'user', content: inputs.map((m) => m.text).join('\n\n') }];
    let answer = '';
    try {
      answer = await this.#loop(conv, messages);
      conv.history = messages;
    } catch (err) {
      this.log(`model: ${err instanceof Error ? err.message : String(err)}`);
      answer = sorry(err);
    }
    await this.#slack('chat.postMessage', () => this.slack.chat.postMessage({ channel, thread_ts: thread, text: answer }));
    await this.#slack('reactions.remove', () => this.slack.reactions.remove({ channel, timestamp: last.ts, name: THINKING }));
  }

  /**
   * The tool loop: asks the model, runs the tools it calls, and goes on
   * until it answers in text. Before each request after the first, the
   * messages that arrived meanwhile join it, after the tool results.
   * @param {Conversation} conv
   * @param {MessageParam[]} messages grows with the turn
   * @returns {Promise<string>} the answer
   */
  async #loop(conv, messages) {
    for (let step = 0; step < MAX_STEPS; step++) {
      const res = await this.anthropic.messages.create({
        model: this.model,
        max_tokens: 1024,
        system: SYSTEM,
        tools: [fetchPageTool],
        messages,
      });
      messages.push({ role: 'assistant', content: res.content });
      const calls = res.content.filter((b) => b.type === 'tool_use');
      if (res.stop_reason !== 'tool_use' || calls.length === 0) {
        return res.content.map((b) => (b.type === 'text' ? b.text : '')).join('').trim() || '(no answer)';
      }
      /** @type {ContentBlockParam[]} */
      const content = [];
      for (const call of calls) {
        const out = call.name === fetchPageTool.name ? await fetchPage(call.input) : { content: `no tool named ${call.name}`, isError: true };
        content.push({ type: 'tool_result', tool_use_id: call.id, content: out.content, is_error: out.isError });
      }
      const steering = conv.pending.splice(0);
      for (const m of steering) content.push({ type: 'text', text: `(new message in the thread while you worked) ${m.text}` });
      messages.push({ role: 'user', content });
    }
    return `I stopped after ${MAX_STEPS} steps without an answer; please ask again more narrowly.`;
  }

  /**
   * Calls Slack, logging a failure rather than throwing: a lost reaction
   * must not lose the reply. The WebClient retries rate limits itself,
   * waiting as Retry-After says.
   * @param {string} method
   * @param {() => Promise<unknown>} call
   */
  async #slack(method, call) {
    try {
      await call();
    } catch (err) {
      this.log(`slack ${method}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Waits for the turns running. */
  async close() {
    await Promise.allSettled([...this.work]);
  }
}

/**
 * The reply when the model could not answer.
 * @param {unknown} err
 */
export function sorry(err) {
  if (err instanceof Anthropic.APIError && (err.status === 529 || err.status === 429 || (err.status ?? 0) >= 500)) {
    return `Sorry, the model is unavailable right now (${err.status}); I could not answer. Please try again in a few minutes.`;
  }
  return 'Sorry, something went wrong while I worked on that; I could not answer. Please try again.';
}
