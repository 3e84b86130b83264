// startProxy: runs `recorder proxy` as a child process, reads its start
// line and hands back what a test needs: the proxy's URL, the control
// client, the CA, the environment for a child process, and close().
import { resolveBinary } from './binary.js';
import { startRecorder } from './child.js';
import { Control } from './control.js';

/** How startProxy runs the proxy; each maps to a flag of `recorder proxy` (docs/cli/recorder.md). */
export interface ProxyOptions {
  /** The cassette directory (--dir); default the proxy's, recordings/cassettes under the cwd. Many proxies may share one. */
  dir?: string;
  /** --mode; default the proxy's: replay when CI is set, else auto. */
  mode?: 'auto' | 'replay' | 'record' | 'passthrough' | 'mock';
  /** --config: a YAML or JSON file of rules and allowed origins. */
  config?: string;
  /** --allow, each: more origins the proxy may reach, as https://host:port. */
  allow?: string[];
  /** --fake-model: the scripted model answers the model rules (control.model). */
  fakeModel?: boolean;
  /** --mock-slack: the proxy's Slack mock answers the slack rule (control.slack). */
  mockSlack?: boolean;
  /** --upstream-ca, each: PEM files of CAs to trust for upstream origins (a test's own HTTPS server). */
  upstreamCA?: string[];
  /** --ca-dir: where the proxy's CA lives. */
  caDir?: string;
  /** More flags, verbatim. */
  args?: string[];
  /** The recorder binary; default resolveBinary() (AGENTVCR_BINARY, else the platform package). */
  binary?: string;
  /** The proxy process's environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** quiet (default): warnings only (--quiet), on this process's stderr; verbose: a line per exchange too; silent: nothing (kept for errors). */
  log?: 'quiet' | 'verbose' | 'silent';
  /** How long the proxy may take to print its start line (default 30000), then an Error with its stderr. */
  startTimeoutMs?: number;
}

/** A running proxy. close() (or `await using`) stops it, writing its recordings. */
export interface Proxy extends AsyncDisposable {
  /** The proxy, as http://127.0.0.1:PORT: HTTPS_PROXY for an agent. */
  readonly url: string;
  /** The control API's URL. */
  readonly controlUrl: string;
  /** The control API's bearer token. */
  readonly token: string;
  /** The proxy's CA certificate (PEM file) that a client must trust. */
  readonly caPath: string;
  /** What a child process needs (HTTPS_PROXY, NODE_EXTRA_CA_CERTS, ...): spread into spawn's env. */
  readonly env: Record<string, string>;
  /** What that environment cannot do (such as route a Go agent to a loopback origin). */
  readonly warnings: string[];
  /** The control client. */
  readonly control: Control;
  /** The proxy's process id. */
  readonly pid: number;
  /** Resolves when the proxy's process has exited, however. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Stops the proxy (SIGTERM) and waits for it to exit, its recordings
   * written; idempotent. Rejects when the proxy failed, or had died before.
   */
  close(): Promise<void>;
}

interface StartLine {
  proxy: string;
  control: string;
  token: string;
  ca: string;
  env: Record<string, string>;
  warnings: string[] | null;
}

/** isStartLine reports whether the proxy's first line has the start line's shape. */
function isStartLine(v: unknown): v is StartLine {
  if (typeof v !== 'object' || v === null) return false;
  const l = v as Record<string, unknown>;
  return ['proxy', 'control', 'token', 'ca'].every((k) => typeof l[k] === 'string' && l[k] !== '') &&
    typeof l.env === 'object' && l.env !== null && !Array.isArray(l.env) &&
    Object.values(l.env).every((x) => typeof x === 'string') &&
    (l.warnings === undefined || l.warnings === null || Array.isArray(l.warnings));
}

/**
 * startProxy spawns `recorder proxy` on 127.0.0.1:0 (so that any number
 * run at once, one per test worker, even on one cassette directory) and
 * resolves once it printed its start line. On a failed start it rejects
 * with the proxy's exit code and the end of its stderr.
 */
export async function startProxy(options: ProxyOptions = {}): Promise<Proxy> {
  const binary = options.binary ?? resolveBinary();
  const args = ['proxy', '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0'];
  if (options.dir !== undefined) args.push('--dir', options.dir);
  if (options.mode !== undefined) args.push('--mode', options.mode);
  if (options.config !== undefined) args.push('--config', options.config);
  for (const a of options.allow ?? []) args.push('--allow', a);
  if (options.fakeModel) args.push('--fake-model');
  if (options.mockSlack) args.push('--mock-slack');
  for (const ca of options.upstreamCA ?? []) args.push('--upstream-ca', ca);
  if (options.caDir !== undefined) args.push('--ca-dir', options.caDir);
  const log = options.log ?? 'quiet';
  if (log !== 'verbose') args.push('--quiet');
  args.push(...(options.args ?? []));

  // Its stdin is a pipe this process holds: when this process dies, the
  // pipe closes and the proxy stops (with a binary that knows the flag).
  const child = await startRecorder({
    binary, args, command: ['proxy'], env: options.env, log, startTimeoutMs: options.startTimeoutMs,
    caller: 'startProxy', what: 'the proxy', isStartLine, shape: '{"proxy", "control", "token", "ca", "env"}',
  });
  const line = child.line;
  const control = new Control(line.control, line.token, { diagnose: child.describeExit });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      try {
        // The event streams' connections are gone before SIGTERM: the
        // proxy would otherwise wait for them as for any request in flight.
        await child.stop(async () => {
          let streamsTimer: NodeJS.Timeout | undefined;
          await Promise.race([control.closeStreams(), new Promise((resolve) => (streamsTimer = setTimeout(resolve, 1_000)))]);
          clearTimeout(streamsTimer);
        });
      } finally {
        await control.close();
      }
    })());

  return {
    url: line.proxy,
    controlUrl: line.control,
    token: line.token,
    caPath: line.ca,
    env: line.env,
    warnings: line.warnings ?? [],
    control,
    pid: child.pid,
    exited: child.exited,
    close,
    [Symbol.asyncDispose]: close,
  };
}
