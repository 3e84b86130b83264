// What fixture() costs a call from TypeScript: the same scripted web run of
// the reference agent (run as a process), 20 times through fixture() and
// 20 times as a bare HTTP call to the same service (POST /run, the stream
// read to its last line), alternating, on one fixture each. The difference
// is the client's part; `go test ./bench -bench FixtureService` gives the
// service's part over the Go fixture.
//
//   npm run build && go build -o js/.bin/recorder ./cmd/recorder && go build -o js/.bin/agent ./examples/agent
//   AGENTVCR_BINARY=js/.bin/recorder node bench/node/fixture.mjs
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { fixture, startFixtureService, webMessage } from 'agentvcr';

const n = 20;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

const app = {
  name: 'examples/agent',
  command: [fileURLToPath(new URL('../../js/.bin/agent', import.meta.url))],
  addrEnv: 'AGENT_ADDR',
  env: { SLACK_SIGNING_SECRET: 'test-signing-secret', SLACK_BOT_TOKEN: 'xoxb-test', AI_GATEWAY_API_KEY: 'test-gateway-key',
    AGENT_SCHEDULER_SECRET: 'test-scheduler-secret', AGENT_ADMIN_SECRET: 'test-admin-secret' },
  routes: { preset: 'junior', idle: '/api/internal/idle', queue: '/api/internal/queue', queueHold: '/api/internal/queue/hold',
    queueRelease: '/api/internal/queue/release', conversations: '/api/internal/conversations' },
  slackSigningSecret: 'test-signing-secret', schedulerSecret: 'test-scheduler-secret', adminSecret: 'test-admin-secret',
};
const router = { name: 'router', purpose: 'structured', systemPrefix: 'You choose the execution profile' };
const titler = { name: 'title', purpose: 'text' };
const loop = { name: 'agent', purpose: 'agent' };
const routed = { output: { reasoning_level: 'low', profile: 'fast', confidence: 0.9, reason: 'short' } };

const service = await startFixtureService({ log: 'silent' });
const viaClient = await fixture(app, { scriptedModel: true, service });
const bare = await fixture(app, { scriptedModel: true, service });
const script = async (f) => {
  await f.model.respond(router, [routed]);
  await f.model.respond(titler, ['Deploy question']);
  await f.model.respond(loop, ['Deploy 42 went out at 14:02.']);
};
let k = 0;
const client = async () => {
  await script(viaClient);
  const t0 = process.hrtime.bigint();
  const c = await viaClient.run(webMessage(`Did deploy ${++k} go out?`));
  const d = ms(t0);
  if (c.replyTexts.length !== 1) throw new Error(`the client's run: ${JSON.stringify(c)}`);
  return d;
};
const raw = async () => {
  await script(bare);
  const t0 = process.hrtime.bigint();
  const res = await request(`${service.url}/v1/fixtures/${bare.id}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: { kind: 'webMessage', text: `Did deploy ${++k} go out?` } }),
  });
  const text = await res.body.text();
  const d = ms(t0);
  const last = JSON.parse(text.trim().split('\n').pop());
  if (!last.result || last.result.replies.length !== 1) throw new Error(`the bare run: ${text}`);
  return d;
};
const c = [];
const r = [];
try {
  for (let i = 0; i < 3; i++) {
    await client();
    await raw();
  }
  for (let i = 0; i < n; i++) {
    c.push(await client());
    r.push(await raw());
  }
} finally {
  await viaClient.close();
  await bare.close();
  await service.close();
}
console.log(`fixture() run: median ${median(c).toFixed(1)} ms (min ${Math.min(...c).toFixed(1)}, max ${Math.max(...c).toFixed(1)})`);
console.log(`bare HTTP run:  median ${median(r).toFixed(1)} ms (min ${Math.min(...r).toFixed(1)}, max ${Math.max(...r).toFixed(1)})`);
console.log(`client adds:    ${(median(c) - median(r)).toFixed(1)} ms`);
