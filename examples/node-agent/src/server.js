// @ts-check
// The Node example agent: a Slack and web assistant with a model and a web
// tool, run as a process.
//
//   SLACK_SIGNING_SECRET=... SLACK_BOT_TOKEN=xoxb-... ANTHROPIC_API_KEY=... node src/server.js
//
// Slack posts its events to POST /api/webhooks/slack; with DATABASE_URL the
// web routes, forks and the reporting route serve too (src/app.js lists
// them). It listens on AGENT_ADDR (host:port), else 127.0.0.1:$PORT (3000).
// Outbound traffic is plain fetch (the Anthropic SDK, the web tool) and
// node:https (the Slack WebClient), so the environment decides where it
// goes: HTTPS_PROXY and NODE_EXTRA_CA_CERTS (with NODE_OPTIONS on Node 20)
// put it behind a recording proxy.
import { startAgent } from './app.js';

const addr = process.env.AGENT_ADDR;
const [host, port] = addr ? [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))] : ['127.0.0.1', Number(process.env.PORT ?? 3000)];
let agent;
try {
  agent = await startAgent({ env: process.env, host, port });
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)} (see the top of src/server.js)\n`);
  process.exit(2);
}
process.stdout.write(`listening on ${agent.url}\n`);

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    agent.close().then(() => process.exit(0));
  });
}
