// "agentvcr/vitest" in a real vitest run: the tests in fixtures/vitest run
// in a nested `vitest run` (its JSON reporter's output read back), with a
// proxy per worker, against an origin on loopback and one cassette
// directory.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AgentvcrMeta } from '../src/vitest.js';
import { startOrigin, tempDir, type Origin } from './useproxy.helpers.js';

const fixture = fileURLToPath(new URL('./fixtures/vitest', import.meta.url));
const vitestBin = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));

interface Report {
  testResults: { name: string; assertionResults: { fullName: string; status: string; failureMessages: string[]; meta: { agentvcr?: AgentvcrMeta } }[] }[];
}

/** Every file under dir, concatenated: what the cassettes hold. */
function cassettes(dir: string): string {
  let all = '';
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else all += readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return all;
}

describe('agentvcr/vitest', () => {
  let origin: Origin;
  let dir: string;
  let cleanup: () => void;
  beforeAll(async () => {
    [dir, cleanup] = tempDir('agentvcr-vitest-');
    origin = await startOrigin();
  });
  afterAll(async () => {
    await origin?.close();
    cleanup?.();
  });

  /** run runs the fixture project's files matching filters; it resolves with the JSON report whatever the exit code. */
  function run(name: string, filters: string[]): Promise<{ report: Report; output: string }> {
    const cassetteDir = join(dir, name);
    const out = join(dir, `${name}.json`);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(VITEST|CI$|NODE_ENV$|TEST$)/.test(k)) env[k] = v;
    Object.assign(env, { AGENTVCR_TEST_DIR: cassetteDir, AGENTVCR_TEST_CA_DIR: join(dir, 'ca'), AGENTVCR_TEST_ORIGIN: origin.url, AGENTVCR_TEST_CACHE_DIR: join(dir, 'vite') });
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [vitestBin, 'run', '--root', fixture, '--reporter=json', `--outputFile=${out}`, ...filters],
        { env, timeout: 60_000 }, (err, stdout, stderr) => {
          let report: Report;
          try {
            report = JSON.parse(readFileSync(out, 'utf8')) as Report;
          } catch {
            return reject(new Error(`the nested vitest wrote no report: ${err?.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          }
          resolve({ report, output: stdout + stderr });
        });
    });
  }
  const results = (r: Report) => r.testResults.flatMap((f) => f.assertionResults);

  test('a test that leaves a script unused fails, naming it', async () => {
    const { report } = await run('unused', ['unused']);
    const [t] = results(report);
    expect(t?.status).toBe('failed');
    expect(t?.failureMessages.join('\n')).toContain('an answer nobody asked for');
    expect(t?.meta.agentvcr).toMatchObject({ scope: 'unused.vcr.ts > leaves a script unused', passed: false, unused: [expect.stringContaining('an answer nobody asked for')] });
  });

  test("a passing test's recordings are written, a failing test's dropped; task.meta.agentvcr says so", async () => {
    const { report } = await run('record', ['record']);
    const byName = Object.fromEntries(results(report).map((t) => [t.fullName, t]));
    const kept = byName['the origin a passing test keeps its recording'];
    const dropped = byName['the origin a failing test drops its recording'];
    expect(kept?.status).toBe('passed');
    expect(dropped?.status).toBe('failed');
    expect(kept?.meta.agentvcr).toMatchObject({
      scope: 'record.vcr.ts > the origin > a passing test keeps its recording', passed: true, recorded: 1, dropped: 0, missed: 0, violations: [],
    });
    expect(dropped?.meta.agentvcr).toMatchObject({ passed: false, recorded: 0, dropped: 1 });
    const held = cassettes(join(dir, 'record'));
    expect(held).toContain('/kept');
    expect(held).not.toContain('/dropped');
  });

  test("the config's options lie over the code's, and a failing onProgress handler fails its test", async () => {
    const { report } = await run('options', ['options']);
    const byName = Object.fromEntries(results(report).map((t) => [t.fullName, t]));
    const both = byName['the options of code and config both hold'];
    expect(both?.status, both?.failureMessages.join('\n')).toBe('passed');
    const handler = byName['a failing onProgress handler fails the test'];
    expect(handler?.status).toBe('failed');
    expect(handler?.failureMessages.join('\n')).toContain('the handler fails on purpose');
    expect(handler?.meta.agentvcr).toMatchObject({ passed: false });
  });

  test('test.concurrent fails with a message that says so, not a bare 409', async () => {
    const { report } = await run('concurrent', ['concurrent']);
    const ts = results(report);
    expect(ts.map((t) => t.status).sort()).toEqual(['failed', 'passed']);
    const failed = ts.find((t) => t.status === 'failed');
    expect(failed?.failureMessages.join('\n')).toContain('vcr supports one test at a time per worker (test.concurrent is not supported)');
  });

  test('a test name over 256 bytes makes a shortened scope name', async () => {
    const { report } = await run('long', ['long']);
    const [t] = results(report);
    expect(t?.status, t?.failureMessages.join('\n')).toBe('passed');
    expect(Buffer.byteLength(t?.meta.agentvcr?.scope ?? '')).toBeLessThanOrEqual(256);
  });

  test("the scripted model is reset before each test's scope: no calls carry over", async () => {
    const { report } = await run('reset', ['reset']);
    for (const t of results(report)) expect(t.status, `${t.fullName}: ${t.failureMessages.join('\n')}`).toBe('passed');
  });

  test("a worker fixture built on the worker's proxy type-checks", async () => {
    const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
    const project = fileURLToPath(new URL('./fixtures/types', import.meta.url));
    const out = await new Promise<string>((resolve) => {
      execFile(process.execPath, [tsc, '-p', project], { timeout: 60_000 }, (err, stdout, stderr) => resolve(err ? `${err.message}\n${stdout}${stderr}` : ''));
    });
    expect(out).toBe('');
  });

  test('two files in two workers: a proxy each, one cassette directory', async () => {
    const { report } = await run('two', ['two-']);
    const ts = results(report);
    expect(ts.map((t) => t.status)).toEqual(['passed', 'passed']);
    const proxies = ts.map((t) => t.meta.agentvcr?.proxy);
    expect(new Set(proxies).size, `proxies ${proxies.join(', ')}`).toBe(2);
    const held = cassettes(join(dir, 'two'));
    expect(held).toContain('/two-a');
    expect(held).toContain('/two-b');
  });
});
