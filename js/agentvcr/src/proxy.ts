// startProxy: runs `recorder proxy` as a child process, reads its start
// line and hands back what a test needs: the proxy's URL, the control
// client, the CA, the environment for a child process, and close().
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolveBinary } from './binary.js';
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

/** The bytes of the proxy's stderr kept for error messages. */
const tailBytes = 8192;

/** How long close() waits for the proxy to write its recordings and exit before it kills it. */
const stopTimeoutMs = 30_000;

const running = new Set<ChildProcess>();
let exitHook = false;

/** How long a failed start waits for the proxy's stderr to end, so that the error holds all of it. */
const stderrWaitMs = 2_000;

/**
 * Whether a recorder binary's `proxy` takes --exit-on-stdin-close (stop,
 * as on SIGTERM, when its standard input closes: when this process dies,
 * however, even by SIGKILL, the proxy does not outlive it). Asked once
 * per binary, of its help; an older binary without the flag is run
 * without it.
 */
const stdinFlag = new Map<string, Promise<boolean>>();
function exitsOnStdinClose(binary: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  let known = stdinFlag.get(binary);
  if (!known) {
    known = new Promise<boolean>((resolve) => {
      execFile(binary, ['proxy', '-h'], { env, timeout: 2_000, killSignal: 'SIGKILL' }, (_err, stdout, stderr) => {
        resolve(`${stdout}${stderr}`.includes('exit-on-stdin-close'));
      });
    });
    stdinFlag.set(binary, known);
  }
  return known;
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
  // Its stdin is a pipe this process holds: when this process dies, the
  // pipe closes and the proxy stops (with a binary that knows the flag).
  if (await exitsOnStdinClose(binary, options.env ?? process.env)) args.push('--exit-on-stdin-close');
  args.push(...(options.args ?? []));

  const child = spawn(binary, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => {}); // EPIPE once the proxy has exited
  running.add(child);
  if (!exitHook) {
    exitHook = true;
    // A process that exits with proxies running stops them: each still
    // writes its recordings, on its own.
    process.once('exit', () => {
      for (const c of running) c.kill('SIGTERM');
    });
  }

  let tail = '';
  const stderrEnded = new Promise<void>((resolve) => {
    child.stderr!.once('end', resolve);
    child.stderr!.once('close', resolve);
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => {
    tail = (tail + s).slice(-tailBytes);
    if (log !== 'silent') process.stderr.write(s);
  });
  let status: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (err) => {
      spawnError = err;
      if (child.pid === undefined) {
        status = { code: null, signal: null };
        running.delete(child);
        resolve(status);
      }
    });
    child.once('close', (code, signal) => {
      status = { code, signal };
      running.delete(child);
      resolve(status);
    });
  });
  const describeExit = () =>
    spawnError && child.pid === undefined
      ? `cannot run the recorder binary: ${spawnError.message} (set AGENTVCR_BINARY, or the binary option, to the recorder's path)`
      : status
        ? `the proxy exited with ${status.signal ? `signal ${status.signal}` : `code ${status.code}`}`
        : undefined;
  const stderrTail = () => (tail.trim() ? `\nits stderr ends:\n${tail.trimEnd()}` : '\nit wrote nothing to stderr');

  const line = await new Promise<StartLine>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? 30_000;
    let out = '';
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
    };
    const fail = (why: string) => {
      if (settled) return;
      settle();
      child.kill('SIGKILL');
      // All it wrote: its stderr ends once it has exited (or after a bound,
      // should a process it started hold the pipe).
      let timer: NodeJS.Timeout | undefined;
      void Promise.race([stderrEnded, new Promise((resolve) => (timer = setTimeout(resolve, stderrWaitMs)))]).then(() => {
        clearTimeout(timer);
        reject(new Error(`agentvcr: startProxy: ${why} (${binary} ${args.join(' ')})${stderrTail()}`));
      });
    };
    const onData = (s: string) => {
      out += s;
      const nl = out.indexOf('\n');
      if (nl < 0 || settled) return;
      const first = out.slice(0, nl);
      let parsed: unknown;
      try {
        parsed = JSON.parse(first);
      } catch {
        parsed = undefined;
      }
      if (!isStartLine(parsed)) {
        fail(`its first line is not the start line ({"proxy", "control", "token", "ca", "env"}): ${JSON.stringify(first.slice(0, 500))}; ` +
          'is the binary a recorder of this package\'s version?');
        return;
      }
      settle();
      resolve(parsed);
    };
    const timer = setTimeout(() => fail(`no start line within ${timeoutMs} ms`), timeoutMs);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', onData);
    void exited.then(() => fail(spawnError && child.pid === undefined ? describeExit()! : `${describeExit()} before it was ready`));
  });
  // Whatever the proxy prints later is drained, never left to fill the pipe.
  child.stdout!.resume();

  const control = new Control(line.control, line.token, { diagnose: describeExit });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const diedBefore = status !== undefined;
      // The event streams' connections are gone before SIGTERM: the proxy
      // would otherwise wait for them as for any request in flight.
      let streamsTimer: NodeJS.Timeout | undefined;
      await Promise.race([control.closeStreams(), new Promise((resolve) => (streamsTimer = setTimeout(resolve, 1_000)))]);
      clearTimeout(streamsTimer);
      if (!diedBefore) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([
        exited,
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), stopTimeoutMs))),
      ]);
      clearTimeout(timer);
      await control.close();
      if (done === undefined) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`agentvcr: the proxy did not exit within ${stopTimeoutMs} ms of SIGTERM; killed it${stderrTail()}`);
      }
      // The proxy exits 130 once it has written its recordings.
      const ok = !diedBefore && (done.code === 130 || done.code === 0 || done.signal === 'SIGTERM');
      if (!ok) {
        throw new Error(`agentvcr: ${diedBefore ? 'the proxy had died: ' : ''}${describeExit()}${stderrTail()}`);
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
    pid: child.pid!,
    exited,
    close,
    [Symbol.asyncDispose]: close,
  };
}
