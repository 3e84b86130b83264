// The reference agent (examples/agent), described to fixture() as a
// TypeScript team describes its own app: how it starts, its secrets, its
// routes, and the environment variables its typed options map to. The
// suites' global setup builds it into js/.bin/agent.
import { fileURLToPath } from 'node:url';
import type { App } from '../src/index.js';

export const referenceAgent: App = {
  name: 'examples/agent',
  command: [fileURLToPath(new URL('../../.bin/agent', import.meta.url))],
  addrEnv: 'AGENT_ADDR',
  env: {
    SLACK_SIGNING_SECRET: 'test-signing-secret',
    SLACK_BOT_TOKEN: 'xoxb-test',
    AI_GATEWAY_API_KEY: 'test-gateway-key',
    AGENT_SCHEDULER_SECRET: 'test-scheduler-secret',
    AGENT_ADMIN_SECRET: 'test-admin-secret',
    GITHUB_WEBHOOK_SECRET: 'test-github-webhook-secret',
    AGENT_EVENT_SECRET: 'test-event-secret',
  },
  routes: {
    preset: 'junior',
    idle: '/api/internal/idle',
    queue: '/api/internal/queue',
    queueHold: '/api/internal/queue/hold',
    queueRelease: '/api/internal/queue/release',
    queueHoldPaused: '/api/internal/queue/hold?only=paused',
    conversations: '/api/internal/conversations',
    automations: '/api/internal/automations',
    memories: '/api/internal/memories',
    credentials: '/api/internal/credentials',
    githubWebhook: '/api/webhooks/github',
    events: '/api/events',
    eventAutomations: '/api/internal/event-automations',
    watches: '/api/internal/watches',
  },
  options: {
    turnTimeout: { env: 'AGENT_TURN_TIMEOUT', duration: 'go' },
    toolCalls: 'AGENT_TOOL_CALL_LIMIT',
    turnSlice: { env: 'AGENT_TURN_SLICE', duration: 'go' },
    contextWindowTokens: 'AGENT_CONTEXT_WINDOW_TOKENS',
    automatedTurns: 'AGENT_AUTOMATED_TURN_LIMIT',
  },
  slackSigningSecret: 'test-signing-secret',
  schedulerSecret: 'test-scheduler-secret',
  adminSecret: 'test-admin-secret',
  githubWebhookSecret: 'test-github-webhook-secret',
  eventSecret: 'test-event-secret',
  botName: 'junior-example',
  model: 'anthropic/claude-sonnet-4.5',
};

/** The scripts' agents: the router, the title and the agent loop, as the Go tests name them. */
export const router = { name: 'router', purpose: 'structured', systemPrefix: 'You choose the execution profile' } as const;
export const titler = { name: 'title', purpose: 'text' } as const;
export const loop = { name: 'agent', purpose: 'agent' } as const;
export const routed = { output: { reasoning_level: 'low', profile: 'fast', confidence: 0.9, reason: 'short' } };

/** The recorded conversation the recall and compaction examples load. */
export const launchPlanning = fileURLToPath(new URL('../../../history/testdata/launch-planning.json', import.meta.url));
