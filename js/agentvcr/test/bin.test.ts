// bin/agentvcr.js (`npx agentvcr`) off a terminal: recorder runs in a
// process group of its own; `proxy` still ends with the wrapper, even when
// the wrapper dies by SIGKILL.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, test } from 'vitest';
import { tempDir } from './client-helpers.js';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const wrapper = fileURLToPath(new URL('../bin/agentvcr.js', import.meta.url));

/** alive reports whether pid runs (a zombie, exited but not reaped, does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  // The wrapper imports dist/binary.js.
  const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [tsc, '-p', pkg], { timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`tsc: ${err.message}\n${stdout}${stderr}`)) : resolve());
  });
}, 120_000);

test('npx agentvcr proxy ends when the wrapper is killed with SIGKILL', async () => {
  const w = spawn(process.execPath, [wrapper, 'proxy', '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0',
    '--dir', tempDir(), '--ca-dir', tempDir('agentvcr-ca-'), '--quiet'], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  let out = '';
  w.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    w.stdout.on('data', (s: string) => {
      out += s;
      if (out.includes('\n')) resolve();
    });
    w.once('exit', (code) => reject(new Error(`the wrapper exited with ${code} before the proxy's start line: ${out}`)));
  });
  const children = readFileSync(`/proc/${w.pid}/task/${w.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  expect(children).toHaveLength(1);
  const recorder = children[0]!;
  expect(alive(recorder)).toBe(true);
  w.kill('SIGKILL');
  await exited;
  try {
    await until(`recorder ${recorder} stops after the wrapper's SIGKILL`, () => !alive(recorder), 10_000);
  } finally {
    if (alive(recorder)) process.kill(recorder, 'SIGKILL');
  }
}, 30_000);
