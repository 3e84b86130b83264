// @ts-check
// The Slack side of the agent: the Events API route (signed requests,
// url_verification, mentions and thread messages) as Junior receives them
// at POST /api/webhooks/slack.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's window for a request's timestamp: older requests are replays. */
const MAX_SKEW_SECONDS = 5 * 60;

/** The most a Slack request body may hold here. */
const MAX_BODY_BYTES = 1 << 20;

/**
 * Checks a request's Slack signature: v0=hex(HMAC_SHA256(secret,
 * "v0:" + timestamp + ":" + body)), with a timestamp at most five minutes
 * off, as Slack documents. Returns why it fails, or '' when it holds.
 * @param {string} secret the app's signing secret
 * @param {string | undefined} timestamp the x-slack-request-timestamp header
 * @param {string | undefined} signature the x-slack-signature header
 * @param {string} body the raw body
 * @param {number} [now] seconds since the epoch
 * @returns {string}
 */
export function checkSignature(secret, timestamp, signature, body, now = Date.now() / 1000) {
  if (!timestamp || !signature) return 'missing x-slack-request-timestamp or x-slack-signature';
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(now - ts) > MAX_SKEW_SECONDS) return 'the request timestamp is outside the five-minute window';
  const want = Buffer.from('v0=' + createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex'));
  const got = Buffer.from(signature);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return 'the signature does not match';
  return '';
}

/**
 * @typedef {object} SlackEvent
 * @property {string} type app_mention or message
 * @property {string} [subtype]
 * @property {string} [user]
 * @property {string} [bot_id]
 * @property {string} [text]
 * @property {string} channel
 * @property {string} [channel_type]
 * @property {string} ts
 * @property {string} [thread_ts]
 */

/**
 * One message the agent takes: who wrote what, where.
 * @typedef {object} Inbound
 * @property {string} channel
 * @property {string} thread the thread's ts (the message's own when it starts one)
 * @property {string} ts
 * @property {string} user
 * @property {string} text without the mention of the agent
 * @property {boolean} mention the agent was mentioned, or messaged directly
 */

/**
 * Turns an Events API callback into the message the agent takes, or null
 * for what it ignores: bots (itself included), edits and other subtypes.
 * @param {SlackEvent | undefined} ev
 * @returns {Inbound | null}
 */
export function inbound(ev) {
  if (!ev || (ev.type !== 'app_mention' && ev.type !== 'message')) return null;
  if (ev.bot_id || !ev.user || (ev.subtype && ev.subtype !== 'file_share')) return null;
  const text = (ev.text ?? '').replace(/<@[UW][A-Z0-9]+>/g, '').trim();
  return {
    channel: ev.channel,
    thread: ev.thread_ts ?? ev.ts,
    ts: ev.ts,
    user: ev.user,
    text,
    mention: ev.type === 'app_mention' || ev.channel_type === 'im' || /<@[UW][A-Z0-9]+>/.test(ev.text ?? ''),
  };
}

/**
 * Handles POST /api/webhooks/slack: verifies the signature, answers
 * url_verification, and hands each event to `take` before it answers 200,
 * so that Slack gets its ack at once while the work goes on in the
 * background (Slack retries an event not acked within three seconds).
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {{signingSecret: string, take: (msg: Inbound) => void, log: (line: string) => void}} deps
 */
export async function slackEvents(req, res, { signingSecret, take, log }) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return reply(res, 413, { error: 'the body is over 1 MiB' });
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks).toString('utf8');
  const bad = checkSignature(signingSecret, header(req, 'x-slack-request-timestamp'), header(req, 'x-slack-signature'), body);
  if (bad) {
    log(`slack: refused a request: ${bad}`);
    return reply(res, 401, { error: bad });
  }
  /** @type {{type?: string, challenge?: string, event_id?: string, event?: SlackEvent}} */
  let envelope;
  try {
    envelope = JSON.parse(body);
  } catch {
    return reply(res, 400, { error: 'the body is not JSON' });
  }
  if (envelope.type === 'url_verification') return reply(res, 200, { challenge: envelope.challenge });
  if (envelope.type === 'event_callback') {
    const msg = inbound(envelope.event);
    if (msg) take(msg);
  }
  reply(res, 200, {});
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {string} name
 */
function header(req, name) {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
