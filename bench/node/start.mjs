// What the npm package costs a vitest suite: startProxy to ready, close,
// and a test scope's begin and end, each the median of 20, against the
// floor under them: `recorder --version` (the binary's own start).
//
//   npm run build && AGENTVCR_BINARY=js/.bin/recorder node bench/node/start.mjs
//
// (go build -o js/.bin/recorder ./cmd/recorder first, or let npm test do it.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinary, startProxy } from 'agentvcr';

const n = 20;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const dir = mkdtempSync(join(tmpdir(), 'agentvcr-bench-'));
const binary = resolveBinary();

const version = [];
const start = [];
const close = [];
const scope = [];
try {
  for (let i = 0; i < n; i++) {
    let t0 = process.hrtime.bigint();
    execFileSync(binary, ['--version']);
    version.push(ms(t0));

    t0 = process.hrtime.bigint();
    const proxy = await startProxy({ dir, fakeModel: true, caDir: join(dir, 'ca') });
    start.push(ms(t0));
    for (let j = 0; j < n / 4; j++) {
      t0 = process.hrtime.bigint();
      await proxy.control.beginScope(`scope ${i}.${j}`);
      await proxy.control.endScope(`scope ${i}.${j}`, true);
      scope.push(ms(t0));
    }
    t0 = process.hrtime.bigint();
    await proxy.close();
    close.push(ms(t0));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const row = (name, xs) => console.log(`${name.padEnd(26)} median ${median(xs).toFixed(1).padStart(7)} ms  (n=${xs.length})`);
row('recorder --version', version);
row('startProxy to ready', start);
row('proxy.close()', close);
row('beginScope + endScope', scope);
console.log(`startProxy / --version: ${(median(start) / median(version)).toFixed(2)}x`);
