// Running the recorder binary as a child of this process: spawned with its
// standard input a pipe this process holds (so that, with
// --exit-on-stdin-close, it stops when this process dies, however), its
// first line of output read as a start line, its stderr kept for errors,
// and a stop that waits for it to exit. startProxy and
// startFixtureService are this with their own command and start line.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/** The bytes of the child's stderr kept for error messages. */
const tailBytes = 8192;

/** How long stop() waits for the child to exit after SIGTERM before it kills it. */
const stopTimeoutMs = 30_000;

/** How long a failed start waits for the child's stderr to end, so that the error holds all of it. */
const stderrWaitMs = 2_000;

const running = new Set<ChildProcess>();
let exitHook = false;

/** How a child ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RecorderChildOptions<L> {
  /** The binary. */
  binary: string;
  /** Its arguments, --exit-on-stdin-close left out (added when the binary takes it). */
  args: string[];
  /** The subcommand whose help names --exit-on-stdin-close, as ['proxy']. */
  command: string[];
  env?: NodeJS.ProcessEnv;
  /** quiet or verbose: the child's stderr goes to this process's; silent: kept for errors only. */
  log: 'quiet' | 'verbose' | 'silent';
  startTimeoutMs?: number;
  /** Names the child in messages, as "startProxy" and "the proxy". */
  caller: string;
  what: string;
  /** Says whether the first line is the start line, and describes one for an error. */
  isStartLine: (v: unknown) => v is L;
  shape: string;
}

/** A started child: its start line, and how to stop it. */
export interface RecorderChild<L> {
  line: L;
  pid: number;
  exited: Promise<ExitStatus>;
  /** Why the child is gone ("exited with code 1"), or undefined while it runs. */
  describeExit(): string | undefined;
  /**
   * Stops it (SIGTERM), waits for it to exit, and rejects unless it had
   * been running and exited as a stopped recorder does (130, 0 or by
   * SIGTERM). before runs first.
   */
  stop(before?: () => Promise<void>): Promise<void>;
}

/**
 * Whether a recorder binary's command takes --exit-on-stdin-close, asked
 * once per binary and command, of its help: an older binary without the
 * flag is run without it.
 */
const stdinFlag = new Map<string, Promise<boolean>>();
function exitsOnStdinClose(binary: string, command: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const key = `${binary}\0${command.join(' ')}`;
  let known = stdinFlag.get(key);
  if (!known) {
    known = new Promise<boolean>((resolve) => {
      execFile(binary, [...command, '-h'], { env, timeout: 2_000, killSignal: 'SIGKILL' }, (_err, stdout, stderr) => {
        resolve(`${stdout}${stderr}`.includes('exit-on-stdin-close'));
      });
    });
    stdinFlag.set(key, known);
  }
  return known;
}

/** startRecorder spawns the binary and resolves with its start line; on a failed start it rejects with the exit and the end of its stderr. */
export async function startRecorder<L>(o: RecorderChildOptions<L>): Promise<RecorderChild<L>> {
  const env = o.env ?? process.env;
  const args = [...o.args];
  if (await exitsOnStdinClose(o.binary, o.command, env)) args.push('--exit-on-stdin-close');
  const child = spawn(o.binary, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => {}); // EPIPE once the child has exited
  running.add(child);
  if (!exitHook) {
    exitHook = true;
    // A process that exits with children running stops them: each still
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
    if (o.log !== 'silent') process.stderr.write(s);
  });
  let status: ExitStatus | undefined;
  let spawnError: Error | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
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
        ? `${o.what} exited with ${status.signal ? `signal ${status.signal}` : `code ${status.code}`}`
        : undefined;
  const stderrTail = () => (tail.trim() ? `\nits stderr ends:\n${tail.trimEnd()}` : '\nit wrote nothing to stderr');

  const line = await new Promise<L>((resolve, reject) => {
    const timeoutMs = o.startTimeoutMs ?? 30_000;
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
        reject(new Error(`agentvcr: ${o.caller}: ${why} (${o.binary} ${args.join(' ')})${stderrTail()}`));
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
      if (!o.isStartLine(parsed)) {
        fail(`its first line is not the start line (${o.shape}): ${JSON.stringify(first.slice(0, 500))}; ` +
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
  // Whatever the child prints later is drained, never left to fill the pipe.
  child.stdout!.resume();

  const stop = async (before?: () => Promise<void>) => {
    const diedBefore = status !== undefined;
    if (before) await before();
    if (!diedBefore) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      exited,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (done === undefined) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`agentvcr: ${o.what} did not exit within ${stopTimeoutMs} ms of SIGTERM; killed it${stderrTail()}`);
    }
    // A stopped recorder exits 130 once it has written what it holds.
    const ok = !diedBefore && (done.code === 130 || done.code === 0 || done.signal === 'SIGTERM');
    if (!ok) {
      throw new Error(`agentvcr: ${diedBefore ? `${o.what} had died: ` : ''}${describeExit()}${stderrTail()}`);
    }
  };
  return { line, pid: child.pid!, exited, describeExit, stop };
}
