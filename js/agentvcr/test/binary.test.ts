import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';

test('the suites run the recorder of this checkout', () => {
  const out = execFileSync(process.env.AGENTVCR_BINARY!, ['--version'], { encoding: 'utf8' });
  expect(out).toMatch(/^recorder version /);
});
