// bin/agentvcr.js (`npx agentvcr`) off a terminal: recorder runs in a
// process group of its own; `proxy` still ends with the wrapper, even when
// the wrapper dies by SIGKILL.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, test } from 'vitest';
import { alive, tempDir, until } from './client-helpers.js';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const wrapper = fileURLToPath(new URL('../bin/agentvcr.js', import.meta.url));

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
