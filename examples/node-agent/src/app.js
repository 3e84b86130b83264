// @ts-check
// The agent as an HTTP app, started in the calling process from an
// environment map (not process.env): what server.js runs, and what a test
// starts in its own process. Its routes are getsentry/junior's:
//
//   POST /api/webhooks/slack                 signed Slack events
//   POST /api/conversations                  {idempotencyKey, message}: a new web conversation
//   POST /api/conversations/:id/messages     {idempotencyKey, message}: its next message
//   POST /api/conversations/:id/forks        {idempotencyKey, messageId}: a fork at a reply
//   GET  /api/conversations/:id              the reporting route: the conversation's events
//   GET  /api/internal/idle?waitMs=n         {"idle": bool} (bearer AGENT_ADMIN_SECRET)
//   GET  /health
//
// The web routes name the signed-in user by the X-Agent-User header (an
// email), as a dashboard's sign-in would. Everything but Slack and health
// needs DATABASE_URL: conversations live in PostgreSQL, in Junior's tables.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { WebClient, LogLevel } from '@slack/web-api';
import { Agent } from './agent.js';
import { slackEvents } from './slack.js';
import { Store } from './store.js';

/** The model, unless ANTHROPIC_MODEL says another. */
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

/** The longest an idle route's answer waits. */
const MAX_IDLE_WAIT_MS = 60_000;

/**
 * @typedef {object} RunningAgent
 * @property {string} url the app's base URL, http://127.0.0.1:PORT
 * @property {() => boolean} idle the agent's own word that nothing is stored, queued or running
 * @property {() => Promise<void>} close stops taking requests, waits for the work under way, and closes the database
 */

/**
 * Starts the agent from env: SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN and
 * ANTHROPIC_API_KEY (required), ANTHROPIC_MODEL, DATABASE_URL (the web
 * routes, forks and reports), AGENT_ADMIN_SECRET (the idle route; off
 * when unset) and SLACK_API_URL. It listens on host:port (127.0.0.1 and a
 * free port by default). Its outbound HTTP is this process's fetch and
 * node:https: in a test, route them through the proxy first (useProxy).
 * @param {{ env: Record<string, string | undefined>, host?: string, port?: number, log?: (line: string) => void }} o
 * @returns {Promise<RunningAgent>}
 */
export async function startAgent({ env, host = '127.0.0.1', port = 0, log = (line) => process.stderr.write(`node-agent: ${line}\n`) }) {
  const required = (/** @type {string} */ name) => {
    const v = env[name];
    if (!v) throw new Error(`node-agent: set ${name}`);
    return v;
  };
  const signingSecret = required('SLACK_SIGNING_SECRET');
  const adminSecret = env.AGENT_ADMIN_SECRET ?? '';
  const store = env.DATABASE_URL ? new Store(env.DATABASE_URL) : undefined;
  if (store) await store.migrate();
  const slackOptions = env.SLACK_API_URL ? { slackApiUrl: env.SLACK_API_URL } : {};
  const agent = new Agent({
    anthropic: new Anthropic({ apiKey: required('ANTHROPIC_API_KEY') }),
    slack: new WebClient(required('SLACK_BOT_TOKEN'), { logLevel: LogLevel.ERROR, ...slackOptions }),
    model: env.ANTHROPIC_MODEL || DEFAULT_MODEL,
    log,
    store,
  });

  const server = createServer((req, res) => {
    route(req, res).catch((err) => {
      log(`${req.method} ${req.url}: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
    });
  });

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  async function route(req, res) {
    const url = new URL(req.url ?? '/', 'http://agent');
    const path = url.pathname;
    const admin = adminSecret !== '' && req.headers.authorization === `Bearer ${adminSecret}`;
    if (req.method === 'POST' && path === '/api/webhooks/slack') {
      return slackEvents(req, res, {
        signingSecret,
        log,
        take: (m) => agent.take({ conversation: `slack:${m.channel}:${m.thread}`, source: 'slack', messageId: m.ts, text: m.text, user: m.user, mention: m.mention, channel: m.channel, thread: m.thread }),
      });
    }
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok', service: 'node-agent' });
    if (req.method === 'GET' && path === '/api/internal/idle') {
      if (!adminSecret) return send(res, 404, { error: 'no such route' });
      if (!admin) return send(res, 401, { error: 'the admin bearer is missing or wrong' });
      const waitMs = Math.min(Number(url.searchParams.get('waitMs') ?? 0) || 0, MAX_IDLE_WAIT_MS);
      return send(res, 200, { idle: waitMs > 0 ? await agent.waitIdle(waitMs) : agent.idle() });
    }
    if (!path.startsWith('/api/conversations')) return send(res, 404, { error: 'no such route' });
    if (!store) return send(res, 503, { error: 'the web routes need DATABASE_URL' });
    const user = header(req, 'x-agent-user');
    const m = /^\/api\/conversations(?:\/([^/]+)(?:\/(messages|forks))?)?$/.exec(path);
    if (!m) return send(res, 404, { error: 'no such route' });
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (req.method === 'GET' && id && !m[2]) {
      if (!user && !admin) return send(res, 401, { error: 'sign in (X-Agent-User)' });
      const rows = await store.rows(id);
      if (rows.length === 0) return send(res, 404, { error: 'no such conversation' });
      return send(res, 200, { conversationId: id, events: report(rows) });
    }
    if (req.method !== 'POST') return send(res, 405, { error: 'use POST' });
    if (!user) return send(res, 401, { error: 'sign in (X-Agent-User)' });
    const body = await json(req);
    const key = String(body.idempotencyKey ?? '');
    if (!key) return send(res, 400, { error: 'idempotencyKey is required' });
    if (m[2] === 'forks') {
      const forkId = `local:web:${hex(`fork:${id}:${key}`)}`;
      if (await store.exists(forkId)) return send(res, 200, { conversationId: forkId, status: 'duplicate' });
      if (!(await store.fork(/** @type {string} */ (id), forkId, String(body.messageId ?? '')))) {
        return send(res, 409, { error: `${body.messageId} is no reply of ${id}` });
      }
      return send(res, 200, { conversationId: forkId, status: 'accepted' });
    }
    const message = String(body.message ?? '');
    if (!message) return send(res, 400, { error: 'message is required' });
    const conversation = id ?? `local:web:${hex(`${user}:${key}`)}`;
    if (id && !(await store.exists(id))) return send(res, 404, { error: 'no such conversation' });
    const messageId = `api-msg:${hex(`${conversation}:${key}`)}`;
    const duplicate = agent.seen.has(`${conversation}|${messageId}`);
    agent.take({ conversation, source: 'web', messageId, text: message, user, mention: true });
    return send(res, 200, { conversationId: conversation, messageId, status: duplicate ? 'duplicate' : 'accepted' });
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(undefined));
  });
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://${host}:${addr.port}`,
    idle: () => agent.idle(),
    close: async () => {
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      await agent.close();
      await store?.close();
    },
  };
}

/**
 * The reporting route's events from a conversation's rows, as Junior's
 * reporting API gives them: messages, handled messages, each turn's
 * state, and tool calls with their results.
 * @param {import('./store.js').Row[]} rows
 */
export function report(rows) {
  /** @type {{ seq: number, createdAt: Date, data: Record<string, unknown> }[]} */
  const out = [];
  /** @type {Map<string, { toolCallId: string, name: string, status: string, input?: unknown, output?: string }>} */
  const calls = new Map();
  for (const r of rows) {
    const p = r.payload ?? {};
    const add = (/** @type {Record<string, unknown>} */ data) => out.push({ seq: r.seq, createdAt: r.createdAt, data });
    switch (r.type) {
      case 'message':
        add({ type: 'message', messageId: p.messageId, role: p.role, text: p.text, author: p.meta?.author });
        break;
      case 'message_handled':
        add({ type: 'message_handled', messageId: p.messageId });
        break;
      case 'turn_started':
        add({ type: 'turn_lifecycle', turnId: p.turnId, state: 'started' });
        break;
      case 'turn_completed':
        add({ type: 'turn_lifecycle', turnId: p.turnId, state: p.outcome === 'no_reply' ? 'no_reply' : 'succeeded', outcome: p.outcome });
        break;
      case 'turn_failed':
        add({ type: 'turn_lifecycle', turnId: p.turnId, state: 'failed', failureKind: 'agent', failureCode: p.failureCode });
        break;
      case 'assistant_message': {
        const made = [];
        for (const c of p.message?.content ?? []) {
          if (c.type !== 'toolCall') continue;
          const call = { toolCallId: c.id, name: c.name, status: 'running', input: c.arguments };
          calls.set(c.id, call);
          made.push(call);
        }
        if (made.length) add({ type: 'tool_calls', calls: made });
        break;
      }
      case 'tool_result': {
        const call = calls.get(p.message?.toolCallId);
        if (call) {
          call.status = p.message.isError ? 'error' : 'completed';
          call.output = (p.message.content ?? []).map((/** @type {{ text?: string }} */ c) => c.text ?? '').join('\n');
        }
        break;
      }
    }
  }
  return out;
}

/** @param {string} s */
const hex = (s) => createHash('sha256').update(s).digest('hex').slice(0, 24);

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {string} name
 */
function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] ?? '' : v ?? '';
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {Promise<Record<string, unknown>>}
 */
async function json(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    return typeof v === 'object' && v !== null ? v : {};
  } catch {
    return {};
  }
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
