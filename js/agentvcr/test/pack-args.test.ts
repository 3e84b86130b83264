// scripts/pack.mjs refuses bad arguments with its usage and exit code 2,
// before it builds anything.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const pack = fileURLToPath(new URL('../scripts/pack.mjs', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [pack, ...args], { timeout: 20_000 }, (_err, stdout, stderr) => {
      resolve({ code: child.exitCode, stdout, stderr });
    });
  });
}

for (const args of [['--bogus'], ['--out'], ['stray']]) {
  test(`pack.mjs ${args.join(' ')}: usage and exit 2, no stack`, async () => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pack\.mjs: .*\nusage: node js\/agentvcr\/scripts\/pack\.mjs /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
}
