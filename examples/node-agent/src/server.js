// @ts-check
// The Node example agent: a Slack assistant with a model and a web tool.
//
//   SLACK_SIGNING_SECRET=... SLACK_BOT_TOKEN=xoxb-... ANTHROPIC_API_KEY=... node src/server.js
//
// Slack posts its events to POST /api/webhooks/slack. Outbound traffic is
// plain fetch (the Anthropic SDK, the Slack WebClient, the web tool), so
// the environment decides where it goes: HTTPS_PROXY and
// NODE_EXTRA_CA_CERTS (with NODE_OPTIONS on Node 20) put it behind a
// recording proxy.
import { createServer } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { WebClient, LogLevel } from '@slack/web-api';
import { Agent } from './agent.js';
import { slackEvents } from './slack.js';

/** The model, unless ANTHROPIC_MODEL says another. */
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

/**
 * @param {string} name
 * @returns {string}
 */
function required(name) {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`node-agent: set ${name} (see the top of src/server.js)\n`);
    process.exit(2);
  }
  return v;
}

/** @param {string} line */
const log = (line) => process.stderr.write(`node-agent: ${line}\n`);

const signingSecret = required('SLACK_SIGNING_SECRET');
const agent = new Agent({
  anthropic: new Anthropic({ apiKey: required('ANTHROPIC_API_KEY') }),
  slack: new WebClient(required('SLACK_BOT_TOKEN'), { logLevel: LogLevel.ERROR }),
  model: process.env.ANTHROPIC_MODEL || DEFAULT_MODEL,
  log,
});

const server = createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'POST' && path === '/api/webhooks/slack') {
    slackEvents(req, res, { signingSecret, take: (msg) => agent.take(msg), log }).catch((err) => {
      log(`slack route: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
    return;
  }
  if (req.method === 'GET' && path === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route"}');
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    server.close();
    agent.close().then(() => process.exit(0));
  });
}
