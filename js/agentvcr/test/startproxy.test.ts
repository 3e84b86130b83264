// startProxy's life cycle at its edges: a binary whose start line is not
// one, a proxy whose parent dies by SIGKILL, close() with an event stream
// open.
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { startProxy } from '../src/index.js';
import { alive, tempDir, until } from './client-helpers.js';
import { node24 } from './useproxy.helpers.js';

/** fakeBinary writes a shell script that stands in for the recorder. */
function fakeBinary(body: string): { path: string; pidFile: string } {
  const dir = tempDir('agentvcr-fake-');
  const path = join(dir, 'recorder');
  const pidFile = join(dir, 'pid');
  writeFileSync(path, `#!/bin/sh\n[ "$2" = "-h" ] && exit 2\necho $$ > ${pidFile}\n${body}\n`);
  chmodSync(path, 0o755);
  return { path, pidFile };
}

for (const line of ['null', '{"proxy":1}', '[]', 'not json']) {
  test(`a start line of the wrong shape (${line}) is an Error naming it and the binary; the child is killed`, async () => {
    // It writes to stderr, then prints the line (which may be read first), then waits.
    const fake = fakeBinary(`echo 'the fake recorder speaks' >&2\necho '${line}'\nexec sleep 30`);
    const err = await startProxy({ binary: fake.path, log: 'silent' }).then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain(`its first line is not the start line`);
    expect(err?.message).toContain(JSON.stringify(line));
    expect(err?.message).toContain(fake.path);
    expect(err?.message).toContain('its stderr ends:\nthe fake recorder speaks');
    const pid = Number(readFileSync(fake.pidFile, 'utf8'));
    await until(`the fake recorder ${pid} is gone`, () => !alive(pid), 5_000);
  });
}

test('the proxy stops when the process that started it dies by SIGKILL', async () => {
  const script = fileURLToPath(new URL('./fixtures/start-and-wait.mjs', import.meta.url));
  const parent = spawn(node24, ['--no-warnings', '--experimental-strip-types', script, tempDir(), tempDir('agentvcr-ca-')], {
    env: process.env, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => parent.once('exit', resolve));
  let out = '';
  parent.stdout.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    parent.stdout.on('data', (s: string) => {
      out += s;
      if (out.includes('\n')) resolve();
    });
    parent.once('exit', (code) => reject(new Error(`the parent exited with ${code} before starting the proxy: ${out}`)));
  });
  const { pid } = JSON.parse(out) as { pid: number };
  expect(alive(pid)).toBe(true);
  parent.kill('SIGKILL');
  await exited;
  try {
    await until(`the proxy ${pid} stops after its parent's SIGKILL`, () => !alive(pid), 10_000);
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
}, 30_000);
