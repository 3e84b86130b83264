// Four vitest workers at once, each with its own fixture service and its
// own fixtures (fixtures/workers, in a nested `vitest run`): every test
// gets its own answers, none fails, the four ran at the same time, and
// every report was written.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { tempDir } from './client-helpers.js';

const project = fileURLToPath(new URL('./fixtures/workers', import.meta.url));
const vitestBin = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));

interface Report {
  numTotalTests: number;
  numPassedTests: number;
  testResults: { name: string; startTime: number; endTime: number; assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
}

test('four workers with fixtures at once do not meet, and lose nothing', { timeout: 180_000 }, async () => {
  const dir = tempDir('agentvcr-workers-');
  const out = join(dir, 'report.json');
  const reports = join(dir, 'reports');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(VITEST|NODE_ENV$|TEST$)/.test(k)) env[k] = v;
  Object.assign(env, { AGENTVCR_TEST_CACHE_DIR: join(dir, 'vite'), AGENTVCR_TEST_REPORTS: reports });
  const output = await new Promise<string>((resolve) => {
    execFile(process.execPath, [vitestBin, 'run', '--root', project, '--reporter=json', `--outputFile=${out}`], { env, timeout: 170_000 },
      (_err, stdout, stderr) => resolve(stdout + stderr));
  });
  expect(existsSync(out), output).toBe(true);
  const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
  const failed = report.testResults.flatMap((f) => f.assertionResults).filter((t) => t.status !== 'passed');
  expect(failed.map((t) => `${t.fullName}: ${t.failureMessages.join('\n')}`)).toEqual([]);
  expect(report.numPassedTests).toBe(12);
  // The four files ran at once: each began before any ended.
  const files = report.testResults;
  expect(files).toHaveLength(4);
  expect(Math.max(...files.map((f) => f.startTime))).toBeLessThan(Math.min(...files.map((f) => f.endTime)));
  // Every test wrote its conversation's report: one directory per test.
  const written = readdirSync(reports).filter((d) => readdirSync(join(reports, d)).some((f) => f.endsWith('.json')));
  expect(written).toHaveLength(12);
});
