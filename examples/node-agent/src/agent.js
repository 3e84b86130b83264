// @ts-check
// The agent: conversations from Slack threads and the web, one turn at a
// time per conversation, a tool loop on the Anthropic Messages API, and
// the reply in the thread (Slack) or the conversation (web). A message
// that arrives while a turn runs steers it: it joins the turn's next model
// request, as Junior lets a user steer mid-turn.
//
// With a store (PostgreSQL), every conversation is Junior's event log: each
// input is stored as it arrives, each turn writes Junior's rows in Junior's
// order, and the model's history is read back from the rows, so that
// history written by anyone (the test fixture's loader, a fork) is the
// agent's own. Without one, history stays in memory.
import { EventEmitter } from 'node:events';
import Anthropic from '@anthropic-ai/sdk';
import { fetchPage, fetchPageTool } from './tools.js';

/** The system prompt. */
export const SYSTEM = 'You are a helpful assistant in a Slack workspace. Answer briefly. Use fetch_page to read web pages the user asks about.';

/** The most model requests one turn makes before it gives up. */
const MAX_STEPS = 8;

/** The reaction that says the agent is working on a message. */
const THINKING = 'eyes';

/** The agent's name on its rows. */
const BOT_NAME = 'node-agent';

/**
 * @typedef {import('./store.js').Store} Store
 * @typedef {import('./store.js').NewRow} NewRow
 * @typedef {import('@anthropic-ai/sdk').default.MessageParam} MessageParam
 * @typedef {import('@anthropic-ai/sdk').default.ContentBlockParam} ContentBlockParam
 */

/**
 * An input of a conversation: a Slack message (channel, thread, ts) or a
 * web message (the messageId its route gave it).
 * @typedef {object} Message
 * @property {string} conversation the conversation's id: slack:<channel>:<thread ts>, or local:web:<hex>
 * @property {'slack' | 'web'} source
 * @property {string} messageId the Slack ts, or the web route's id
 * @property {string} text
 * @property {string} user the Slack user id, or the web user's email
 * @property {boolean} mention whether it may start a conversation (a mention, a DM, a web message)
 * @property {string} [channel]
 * @property {string} [thread]
 */

/**
 * @typedef {object} Conversation
 * @property {Message[]} pending messages the running turn (or the next) has not read yet
 * @property {MessageParam[]} history what the model saw in earlier turns (without a store)
 * @property {boolean} running
 */

export class Agent {
  /**
   * @param {object} deps
   * @param {Anthropic} deps.anthropic
   * @param {import('@slack/web-api').WebClient} deps.slack
   * @param {string} deps.model
   * @param {(line: string) => void} deps.log
   * @param {Store} [deps.store]
   */
  constructor({ anthropic, slack, model, log, store }) {
    this.anthropic = anthropic;
    this.slack = slack;
    this.model = model;
    this.log = log;
    this.store = store;
    /** @type {Map<string, Conversation>} by conversation id */
    this.conversations = new Map();
    /** @type {Set<string>} inputs taken, by conversation and message id: a mention comes as app_mention and as message */
    this.seen = new Set();
    /** @type {Set<Promise<void>>} the work under way (stored inputs, turns), for idle() and close() */
    this.work = new Set();
    /** Emits "idle" each time the last work ends. */
    this.events = new EventEmitter();
  }

  /** Whether nothing is stored, queued or running: the idle route's word. */
  idle() {
    return this.work.size === 0;
  }

  /**
   * Resolves once the agent is idle, or after ms: whether it is idle.
   * @param {number} ms
   */
  waitIdle(ms) {
    if (this.idle()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.events.off('idle', done);
        resolve(this.idle());
      };
      const timer = setTimeout(done, ms);
      this.events.on('idle', done);
    });
  }

  /**
   * Tracks background work, for idle() and close().
   * @param {Promise<void>} p
   */
  #track(p) {
    const tracked = p
      .catch((err) => this.log(`work failed: ${err instanceof Error ? err.stack : String(err)}`))
      .finally(() => {
        this.work.delete(tracked);
        if (this.work.size === 0) this.events.emit('idle');
      });
    this.work.add(tracked);
  }

  /**
   * Takes a message, synchronously: it joins its conversation (and steers
   * the running turn), stored first when there is a store; a turn starts
   * unless one runs. A Slack message that is no mention joins only a
   * conversation the agent has. The work goes on in the background.
   * @param {Message} msg
   */
  take(msg) {
    const key = `${msg.conversation}|${msg.messageId}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.#track((async () => {
      let conv = this.conversations.get(msg.conversation);
      if (!conv) {
        const known = this.store ? await this.store.exists(msg.conversation) : false;
        if (!known && !msg.mention) return; // a channel message not for the agent
        conv = this.conversations.get(msg.conversation);
        if (!conv) {
          conv = { pending: [], history: [], running: false };
          this.conversations.set(msg.conversation, conv);
        }
      }
      if (this.store) {
        await this.store.ensure(msg.conversation, { source: msg.source, channel: msg.channel, thread: msg.thread });
        await this.store.append(msg.conversation, [inputRow(msg)]);
      }
      conv.pending.push(msg);
      if (conv.running) this.log(`steer ${msg.conversation}: ${JSON.stringify(msg.text)}`);
      else this.#start(conv);
    })());
  }

  /**
   * Runs turns while the conversation has pending messages.
   * @param {Conversation} conv
   */
  #start(conv) {
    conv.running = true;
    this.#track((async () => {
      try {
        while (conv.pending.length > 0) await this.#turn(conv);
      } finally {
        conv.running = false;
      }
    })());
  }

  /**
   * One turn: the pending messages, the tool loop, the reply. A provider
   * error (after the SDK's retries) ends the turn with a reply that says
   * so, never silence.
   * @param {Conversation} conv
   */
  async #turn(conv) {
    const inputs = conv.pending.splice(0);
    const first = inputs[0];
    const last = inputs[inputs.length - 1];
    const id = first.conversation;
    const turnId = `turn_${first.messageId.replace(/[:.]/g, '_')}`;
    /** @type {NewRow[]} */
    const rows = [];
    const write = async () => {
      if (this.store && rows.length) await this.store.append(id, rows.splice(0));
    };
    rows.push({ type: 'turn_started', key: `turn:${turnId}:started`, payload: { turnId, surface: first.source === 'slack' ? 'slack' : 'api', inputMessageIds: inputs.map((m) => m.messageId) } });
    await write();
    if (first.source === 'slack') {
      await this.#slack('reactions.add', () => this.slack.reactions.add({ channel: first.channel ?? '', timestamp: last.messageId, name: THINKING }));
    }
    const earlier = this.store ? await this.#history(id, inputs) : conv.history;
    /** @type {MessageParam[]} */
    const messages = [...earlier, { role: 'user', content: inputs.map((m) => m.text).join('\n\n') }];
    let answer = '';
    try {
      answer = await this.#loop(conv, messages, rows, inputs, turnId);
      conv.history = messages;
    } catch (err) {
      this.log(`model: ${err instanceof Error ? err.message : String(err)}`);
      answer = sorry(err);
    }
    const replyId = `${turnId}:assistant:1`;
    rows.push({ type: 'message', key: `message:${replyId}`, payload: { role: 'assistant', text: answer, messageId: replyId, meta: { author: { isBot: true, userName: BOT_NAME }, source: first.source } } });
    if (first.source === 'slack') {
      await this.#slack('chat.postMessage', () => this.slack.chat.postMessage({ channel: first.channel ?? '', thread_ts: first.thread, text: answer }));
      await this.#slack('reactions.remove', () => this.slack.reactions.remove({ channel: first.channel ?? '', timestamp: last.messageId, name: THINKING }));
    }
    for (const m of [...inputs, { messageId: replyId }]) {
      rows.push({ type: 'message_handled', key: `message:${m.messageId}:handled`, payload: { messageId: m.messageId } });
    }
    rows.push({ type: 'turn_completed', key: `turn:${turnId}:terminal`, payload: { turnId, outcome: 'success' } });
    await write();
  }

  /**
   * The model's history of a stored conversation: the visible messages of
   * its rows before this turn's inputs, as user and assistant turns.
   * @param {string} id
   * @param {Message[]} inputs
   * @returns {Promise<MessageParam[]>}
   */
  async #history(id, inputs) {
    const now = new Set(inputs.map((m) => m.messageId));
    /** @type {MessageParam[]} */
    const out = [];
    for (const r of await /** @type {Store} */ (this.store).rows(id)) {
      if (r.type !== 'message' || now.has(r.payload?.messageId) || !r.payload?.text) continue;
      const role = r.payload.role === 'assistant' ? 'assistant' : 'user';
      const prev = out[out.length - 1];
      if (prev && prev.role === role) prev.content = `${prev.content}\n\n${r.payload.text}`;
      else out.push({ role, content: String(r.payload.text) });
    }
    // The Messages API starts with the user.
    while (out.length && out[0].role === 'assistant') out.shift();
    return out;
  }

  /**
   * The tool loop: asks the model, runs the tools it calls, and goes on
   * until it answers in text. Before each request after the first, the
   * messages that arrived meanwhile join it, after the tool results.
   * @param {Conversation} conv
   * @param {MessageParam[]} messages grows with the turn
   * @param {NewRow[]} rows the turn's rows, which this adds to
   * @param {Message[]} inputs the turn's inputs, which steering adds to
   * @param {string} turnId
   * @returns {Promise<string>} the answer
   */
  async #loop(conv, messages, rows, inputs, turnId) {
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
      const done = res.stop_reason !== 'tool_use' || calls.length === 0;
      const text = res.content.map((b) => (b.type === 'text' ? b.text : '')).join('').trim();
      rows.push({
        type: 'assistant_message',
        key: done ? `message:${turnId}:assistant:1:agent` : null,
        payload: {
          model: this.model,
          message: {
            role: 'assistant',
            stopReason: done ? 'stop' : 'toolUse',
            content: [
              ...(text ? [{ type: 'text', text }] : []),
              ...calls.map((c) => ({ type: 'toolCall', id: c.id, name: c.name, arguments: c.input })),
            ],
          },
        },
      });
      if (done) return text || '(no answer)';
      /** @type {ContentBlockParam[]} */
      const content = [];
      for (const call of calls) {
        const out = call.name === fetchPageTool.name ? await fetchPage(call.input) : { content: `no tool named ${call.name}`, isError: true };
        content.push({ type: 'tool_result', tool_use_id: call.id, content: out.content, is_error: out.isError });
        rows.push({
          type: 'tool_result',
          key: null,
          payload: { message: { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: out.content }], isError: out.isError } },
        });
      }
      const steering = conv.pending.splice(0);
      inputs.push(...steering);
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

  /** Waits for the work under way. */
  async close() {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }
}

/**
 * The row of an input, as Junior stores a person's message.
 * @param {Message} msg
 * @returns {NewRow}
 */
function inputRow(msg) {
  const author = msg.source === 'slack' ? { userId: msg.user } : { email: msg.user };
  /** @type {Record<string, unknown>} */
  const meta = { author, source: msg.source, explicitMention: msg.mention };
  if (msg.source === 'slack') meta.slackTs = msg.messageId;
  return { type: 'message', key: `message:${msg.messageId}`, payload: { role: 'user', text: msg.text, messageId: msg.messageId, meta } };
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
