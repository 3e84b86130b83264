// What a user gets from npm: the main package and this platform's package,
// packed from this checkout by scripts/pack.mjs, installed with the
// registry unreachable into a fresh project outside the repository, where
// `npx agentvcr` runs the platform package's binary (AGENTVCR_BINARY is
// unset) and a vitest test of the project goes through the proxy.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const root = path.resolve(pkgDir, '../..');
const host = `${process.platform}-${process.arch}`;
const version: string = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;

// The project's processes run as a user's would: with the binary of the
// platform package, not this checkout's, and not as workers of this vitest.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => k !== 'AGENTVCR_BINARY' && !/^VITEST/.test(k) && !/^npm_config_(workspace|prefix|global)/i.test(k),
  ),
);
// npm never reaches a registry: --offline answers from its cache, and
// should it try the network anyway, the proxy is a closed port.
const offline = ['--offline', '--no-audit', '--no-fund', '--proxy=http://127.0.0.1:9', '--https-proxy=http://127.0.0.1:9'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/**
 * The project's lockfile for its dependencies from the registry (vitest,
 * undici), cut from the repository's: `npm ci` there filled npm's cache
 * with their tarballs but not with the registry's documents npm needs to
 * resolve a version without a lockfile.
 */
function lockfileFor(deps: Record<string, string>): object {
  type Entry = Record<string, unknown> & {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    link?: boolean;
  };
  const { packages } = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Entry>;
  };
  // Node's resolution in the lockfile's tree: node_modules/NAME beside
  // `from`, then in each directory above it.
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const at = `${base ? base + '/' : ''}node_modules/${name}`;
      if (packages[at] && !packages[at].link) return at;
      if (!base) return undefined;
      const i = base.lastIndexOf('node_modules/');
      base = i <= 0 ? '' : base.slice(0, i - 1);
    }
  };
  const out: Record<string, Entry> = {};
  const todo = Object.keys(deps).map((name) => resolve('', name));
  while (todo.length > 0) {
    const at = todo.pop();
    if (!at || out[at]) continue;
    // The repository has them as dev dependencies; the project as its own.
    const { dev: _dev, devOptional, ...entry } = packages[at]!;
    if (devOptional) entry.optional = true;
    out[at] = entry;
    const meta = entry.peerDependenciesMeta ?? {};
    for (const name of [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((n) => !meta[n]?.optional),
    ]) {
      todo.push(resolve(at, name));
    }
  }
  return {
    name: 'install-check',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'install-check', dependencies: deps }, ...Object.fromEntries(Object.entries(out).sort()) },
  };
}

// The project's test: a request through the proxy that startProxy starts,
// to an origin on loopback, recorded.
const projectTest = `
import http from 'node:http';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { ProxyAgent, request } from 'undici';
import { expect, test } from 'vitest';
import { startProxy } from 'agentvcr';

test('a request goes through the proxy and is recorded', async () => {
  const origin = http.createServer((req, res) => res.end('hello from ' + req.url));
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  const url = 'http://127.0.0.1:' + origin.address().port;
  try {
    const proxy = await startProxy({ dir: 'cassettes', mode: 'record', allow: [url] });
    try {
      const agent = new ProxyAgent({ uri: proxy.url, proxyTunnel: false });
      const res = await request(url + '/hi', { dispatcher: agent });
      expect(await res.body.text()).toBe('hello from /hi');
      expect(res.headers['x-agentvcr']).toBe('recorded');
      await agent.close();
    } finally {
      await proxy.close();
    }
    expect(readdirSync('cassettes', { recursive: true }).length).toBeGreaterThan(0);
  } finally {
    origin.close();
  }
});
`;

describe('the packed packages, installed offline into a fresh project', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'agentvcr-install-'));
  const project = path.join(tmp, 'project');
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  beforeAll(async () => {
    let t = performance.now();
    const lap = () => `${((performance.now() - t) / 1000).toFixed(1)}s`;
    const { stdout } = await run(
      process.execPath,
      [path.join(pkgDir, 'scripts/pack.mjs'), '--platform', 'host', '--out', path.join(tmp, 'tarballs'), '--json'],
      { env, maxBuffer: 1 << 20 },
    );
    const packed = JSON.parse(stdout) as { name: string; tarball: string }[];
    expect(packed.map((p) => p.name).sort()).toEqual([`@agentvcr/${host}`, 'agentvcr']);
    const packTime = lap();

    t = performance.now();
    mkdirSync(project);
    const lockfile = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
    const source = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
    // The project's own dependencies first, from its lockfile; then the
    // tarballs, as a project adds agentvcr.
    const deps = { vitest: lockfile.packages['node_modules/vitest'].version, undici: source.dependencies.undici };
    const pkg = { name: 'install-check', private: true, type: 'module', dependencies: deps };
    writeFileSync(path.join(project, 'package.json'), JSON.stringify(pkg, null, 2));
    writeFileSync(path.join(project, 'package-lock.json'), JSON.stringify(lockfileFor(deps), null, 2));
    await run(npm, ['ci', ...offline], { cwd: project, env, shell: process.platform === 'win32' });
    await run(npm, ['install', ...offline, ...packed.map((p) => p.tarball)], {
      cwd: project,
      env,
      shell: process.platform === 'win32',
    });
    console.info(`pack.mjs --platform host: ${packTime}; npm ci and npm install of the tarballs, offline: ${lap()}`);
  }, 900_000); // pack.mjs builds with -trimpath: with a cold Go build cache, minutes

  test('npm installs this platform’s package and skips the others', () => {
    expect(readdirSync(path.join(project, 'node_modules/@agentvcr'))).toEqual([host]);
  });

  test('npx agentvcr --version prints the package version', async () => {
    const { stdout } = await run(npx, ['agentvcr', '--version'], { cwd: project, env, shell: process.platform === 'win32' });
    expect(stdout).toBe(`recorder version ${version}\n`);
  });

  test('agentvcr exits with the binary’s exit code', async () => {
    const err = await run(npx, ['agentvcr', 'no-such-command'], { cwd: project, env, shell: process.platform === 'win32' }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('unknown command "no-such-command"');
  });

  test.each(['SIGINT', 'SIGTERM'] as const)(
    'agentvcr passes %s on to the proxy, which stops gracefully (130)',
    async (signal) => {
      const bin = path.join(project, 'node_modules/agentvcr/bin/agentvcr.js');
      const child = spawn(process.execPath, [bin, 'proxy', '--dir', 'cassettes', '--quiet'], {
        cwd: project,
        env: { ...env, XDG_CONFIG_HOME: path.join(tmp, 'config') },
        stdio: ['pipe', 'pipe', 'inherit'], // not a terminal: agentvcr passes every signal on
      });
      const exited = once(child, 'exit');
      // Ready when the start line is out; the test's timeout bounds the wait.
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.on('exit', (code) => reject(new Error(`agentvcr proxy exited (${code}) before its start line`)));
      });
      expect(JSON.parse(line)).toHaveProperty('proxy');
      child.kill(signal);
      const [code] = await exited;
      expect(code).toBe(130);
    },
    30_000,
  );

  test('a vitest test of the project passes through the proxy', async () => {
    mkdirSync(path.join(project, 'test'));
    writeFileSync(path.join(project, 'test/proxy.test.js'), projectTest);
    // The proxy's CA is made in a directory of the project's, not the user's.
    const projectEnv = { ...env, XDG_CONFIG_HOME: path.join(tmp, 'config'), NO_COLOR: '1' };
    const result = await run(npx, ['vitest', 'run'], { cwd: project, env: projectEnv, shell: process.platform === 'win32' }).catch(
      (err: { stdout: string; stderr: string }) => err,
    );
    expect(result.stdout + result.stderr).toMatch(/Tests\s+1 passed/);
  }, 120_000);
});
