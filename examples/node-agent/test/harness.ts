// What the agent's tests share: start the agent as a child process with
// the proxy's environment, post Slack events to it as Slack does (signed),
// and wait for a condition with a deadline.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The test's Slack app: fake values, good for the proxy's Slack mock only. */
export const SLACK = {
  signingSecret: 'test-signing-secret-not-real',
  botToken: 'xoxb-0000-test-not-a-real-token',
  team: 'TTEST00001',
  channel: 'C0TEST0001',
  user: 'U0ALICE001',
  bot: 'U0AGENT001',
};

/** The fake Anthropic key: the scripted model or a replay answers. */
export const ANTHROPIC_KEY = 'sk-ant-test-not-a-real-key';

/** The proxy config the tests start the proxy with. */
export const proxyConfig = fileURLToPath(new URL('../proxy.yaml', import.meta.url));

const server = fileURLToPath(new URL('../src/server.js', import.meta.url));

/** A running agent. */
export interface AgentProcess extends AsyncDisposable {
  url: string;
  /** What the agent wrote on stderr so far (its log). */
  log(): string;
  close(): Promise<void>;
}

/**
 * Starts src/server.js on this Node (process.execPath) with only the
 * proxy's environment, the test's Slack and Anthropic credentials, and
 * PORT=0, and waits for its "listening on" line.
 */
export async function startAgent(proxyEnv: Record<string, string>, extra: Record<string, string> = {}): Promise<AgentProcess> {
  const child = spawn(process.execPath, [server], {
    env: {
      PATH: process.env.PATH ?? '',
      ...proxyEnv,
      PORT: '0',
      SLACK_SIGNING_SECRET: SLACK.signingSecret,
      SLACK_BOT_TOKEN: SLACK.botToken,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('the agent did not print "listening on" within 10 s')), 10_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`${err.message}; its stderr:\n${stderr}`));
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code, signal) => fail(new Error(`the agent exited (${code ?? signal}) before it listened`)));
    child.once('error', fail);
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return { url, log: () => stderr, close, [Symbol.asyncDispose]: close };
}

/** A Slack event as the Events API wraps it. */
export function envelope(event: Record<string, unknown>): string {
  return JSON.stringify({
    token: 'verification-token-unused',
    team_id: SLACK.team,
    api_app_id: 'A0TEST0001',
    type: 'event_callback',
    event_id: `Ev${Math.random().toString(36).slice(2, 12).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    event,
  });
}

/** Posts body to the agent's Slack route, signed with the test's secret as Slack signs it; returns the response. */
export async function postSigned(agentUrl: string, body: string, secret = SLACK.signingSecret): Promise<Response> {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return fetch(`${agentUrl}/api/webhooks/slack`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': ts, 'x-slack-signature': sig },
    body,
  });
}

/** The part of the control client the harness needs (Control.slack.seed). */
interface SlackSeeder {
  seed(s: { channels?: { id: string }[]; users?: { id: string; name?: string }[]; messages?: { channel: string; user?: string; text?: string; thread_ts?: string }[] }): Promise<{ messages: { ts: string }[] }>;
}

/**
 * A person writes in Slack: the message is put into the Slack mock (where
 * the agent's reactions and replies find it, as in Slack) and its event is
 * posted to the agent, signed; a mention comes as app_mention. Returns the
 * message's ts, which is the thread's when it starts one.
 */
export async function say(slack: SlackSeeder, agentUrl: string, text: string, opts: { thread?: string; mention?: boolean } = {}): Promise<string> {
  const mention = opts.mention ?? opts.thread === undefined;
  const full = mention ? `<@${SLACK.bot}> ${text}` : text;
  const seeded = await slack.seed({
    users: [{ id: SLACK.user, name: 'alice' }],
    channels: [{ id: SLACK.channel }],
    messages: [{ channel: SLACK.channel, user: SLACK.user, text: full, ...(opts.thread ? { thread_ts: opts.thread } : {}) }],
  });
  const ts = seeded.messages[0].ts;
  const event = {
    type: mention ? 'app_mention' : 'message',
    user: SLACK.user,
    text: full,
    channel: SLACK.channel,
    ts,
    event_ts: ts,
    ...(opts.thread ? { thread_ts: opts.thread } : {}),
    ...(mention ? {} : { channel_type: 'channel' }),
  };
  const res = await postSigned(agentUrl, envelope(event));
  if (res.status !== 200) throw new Error(`the agent answered the Slack event ${res.status}: ${await res.text()}`);
  return ts;
}

/**
 * Polls check until it returns a value other than undefined, or throws
 * after timeoutMs naming what it waited for: a wait on a condition with a
 * deadline, never a fixed sleep.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, { timeoutMs = 15_000, intervalMs = 25 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The part of the control client that reads the Slack mock. */
interface SlackReader {
  messages(channel: string): Promise<{ ts: string; thread_ts?: string; text: string; bot_id?: string }[]>;
  calls(method?: string): Promise<{ calls: { method: string; params: Record<string, string> }[] }>;
}

/** The agent's replies in a thread, oldest first: what people see there. */
export async function replies(slack: SlackReader, thread: string): Promise<string[]> {
  const all = await slack.messages(SLACK.channel);
  return all.filter((m) => m.thread_ts === thread && m.ts !== thread && m.bot_id).map((m) => m.text);
}

/**
 * Waits until the agent has finished its turn on the message ts: its
 * "thinking" reaction is taken off, which it does after the reply, so that
 * every Slack call of the turn is in.
 */
export async function turnDone(slack: SlackReader, ts: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(`the agent to finish its turn on ${ts} (reactions.remove)`, async () => {
    const { calls } = await slack.calls('reactions.remove');
    return calls.some((c) => c.params.timestamp === ts) ? true : undefined;
  }, { timeoutMs });
}

/** A web page on loopback for fetch_page to read. */
export interface Page extends AsyncDisposable {
  /** http://127.0.0.1:PORT, for the proxy's allow list. */
  origin: string;
  url: string;
  /** The user agents of the requests it served. */
  hits: string[];
  close(): Promise<void>;
}

/** Serves html at /status on 127.0.0.1 (any free port). */
export async function startPage(html: string): Promise<Page> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(String(req.headers['user-agent']));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
  return { origin, url: `${origin}/status`, hits, close, [Symbol.asyncDispose]: close };
}
