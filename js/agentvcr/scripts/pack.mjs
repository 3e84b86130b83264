#!/usr/bin/env node
// Builds the npm packages of agentvcr as tarballs, from this checkout and
// with the Go toolchain, offline:
//
//   node js/agentvcr/scripts/pack.mjs [--platform host|all|linux-x64,...] [--out js/dist] [--json]
//
// For each platform it cross-compiles cmd/recorder (CGO_ENABLED=0,
// -trimpath, the package's version stamped into `recorder --version`) and
// stages the package @agentvcr/<platform> (package.json with os and cpu,
// bin/recorder or bin/recorder.exe, a README). It stages the main package
// "agentvcr" from the files `npm pack` takes from js/agentvcr and dist/
// built by tsc, its package.json gaining optionalDependencies
// on every platform's package at the same version: the source
// package.json has none, because `npm ci` fails on an optional dependency
// that is missing from the lockfile. Then `npm pack` of each into --out,
// whose tarball paths it prints, one a line, or with --json an array of
// {name, version, platform, tarball, bytes, buildMs}.
//
// Without a registry, a project installs the main tarball and its
// platform's (npm install ./agentvcr-0.1.0.tgz ./agentvcr-linux-x64-0.1.0.tgz);
// npm skips the other platforms' optional dependencies, which fail its
// os/cpu check before it would fetch them.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Node's platform-arch -> Go's GOOS, GOARCH. */
const targets = {
  'linux-x64': ['linux', 'amd64'],
  'linux-arm64': ['linux', 'arm64'],
  'darwin-x64': ['darwin', 'amd64'],
  'darwin-arm64': ['darwin', 'arm64'],
  'win32-x64': ['windows', 'amd64'],
};
const stampVar = 'github.com/agentvcr/agentvcr/internal/version.stamp';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const root = path.resolve(pkgDir, '../..');
const win = process.platform === 'win32';

const usage = 'usage: node js/agentvcr/scripts/pack.mjs [--platform host|all|linux-x64,...] [--out DIR] [--json]';
let opts;
try {
  ({ values: opts } = parseArgs({
    options: {
      platform: { type: 'string', default: 'host' },
      out: { type: 'string', default: path.join(root, 'js/dist') },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (err) {
  // An unknown flag, a stray argument, a flag without its value.
  console.error(`pack.mjs: ${err instanceof Error ? err.message : String(err)}\n${usage}`);
  process.exit(2);
}
if (opts.help) {
  console.log(usage);
  process.exit(0);
}
const host = `${process.platform}-${process.arch}`;
const platforms =
  opts.platform === 'all' ? Object.keys(targets) : opts.platform.split(',').map((p) => (p === 'host' ? host : p.trim()));
for (const p of platforms) {
  if (!targets[p]) {
    fail(`--platform ${p}: not one agentvcr builds (${Object.keys(targets).join(', ')}, host or all)`);
    process.exit();
  }
}
const out = path.resolve(opts.out);
mkdirSync(out, { recursive: true });

const source = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const version = source.version;
const stage = mkdtempSync(path.join(os.tmpdir(), 'agentvcr-pack-'));
const log = (line) => (opts.json ? process.stderr : process.stdout).write(line + '\n');
const results = [];
try {
  for (const platform of platforms) {
    const [goos, goarch] = targets[platform];
    const dir = path.join(stage, platform);
    const exe = goos === 'windows' ? 'recorder.exe' : 'recorder';
    const started = performance.now();
    run('go', ['build', '-trimpath', '-ldflags', `-s -w -X ${stampVar}=${version}`, '-o', path.join(dir, 'bin', exe), './cmd/recorder'], {
      cwd: root,
      env: { ...process.env, GOOS: goos, GOARCH: goarch, CGO_ENABLED: '0' },
    });
    const buildMs = Math.round(performance.now() - started);
    chmodSync(path.join(dir, 'bin', exe), 0o755); // the tarball keeps the mode; npm sets none for a package without "bin"
    const [os_, cpu] = platform.split('-');
    writeJSON(path.join(dir, 'package.json'), {
      name: `@agentvcr/${platform}`,
      version,
      description: `The agentvcr recorder binary for ${platform}; installed by the agentvcr package as an optional dependency.`,
      license: source.license,
      os: [os_],
      cpu: [cpu],
      preferUnplugged: true,
    });
    writeFileSync(
      path.join(dir, 'README.md'),
      `# @agentvcr/${platform}\n\nThe \`recorder\` binary of agentvcr ${version} for ${platform} (bin/${exe}).\n` +
        'Install `agentvcr`, not this package: npm installs the one package that fits your platform.\n',
    );
    results.push({ ...pack(dir), platform, buildMs });
  }

  // The main package: what npm pack would take from js/agentvcr, with
  // dist/ compiled afresh into the staging directory (never over the
  // dist/ that tests and a running build use), and the platform packages
  // as optional dependencies.
  const main = path.join(stage, 'agentvcr');
  const tsc = createRequire(path.join(pkgDir, 'package.json')).resolve('typescript/bin/tsc');
  run(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', path.join(main, 'dist')], { cwd: pkgDir });
  const listed = JSON.parse(run('npm', ['pack', '--dry-run', '--json'], { cwd: pkgDir, capture: true }))[0].files;
  for (const { path: file } of listed) {
    if (!file.startsWith('dist/')) cpSync(path.join(pkgDir, file), path.join(main, file), { preserveTimestamps: true });
  }
  const optionalDependencies = Object.fromEntries(Object.keys(targets).map((p) => [`@agentvcr/${p}`, version]));
  writeJSON(path.join(main, 'package.json'), { ...source, optionalDependencies });
  results.push({ ...pack(main), platform: null, buildMs: null });
} catch (err) {
  fail(err.message);
} finally {
  rmSync(stage, { recursive: true, force: true });
}

if (process.exitCode) {
  // failed, and said so
} else if (opts.json) {
  process.stdout.write(JSON.stringify(results, null, 2) + '\n');
} else {
  for (const r of results) {
    const built = r.buildMs === null ? '' : `, built in ${(r.buildMs / 1000).toFixed(1)}s`;
    const size = r.bytes >= 1e6 ? `${(r.bytes / 1e6).toFixed(1)} MB` : `${(r.bytes / 1e3).toFixed(1)} kB`;
    log(`${r.tarball} (${size}${built})`);
  }
}

/** npm pack of dir into out: the tarball's name, version, path and size. */
function pack(dir) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], { cwd: dir, capture: true }));
  const tarball = path.join(out, info.filename);
  return { name: info.name, version: info.version, tarball, bytes: statSync(tarball).size };
}

/** Runs a command; its output goes to stderr unless captured. Fails the script if it fails. */
function run(cmd, args, { cwd, env = process.env, capture = false }) {
  try {
    return execFileSync(cmd, args, {
      cwd,
      env,
      encoding: 'utf8',
      shell: win && cmd === 'npm', // npm is npm.cmd there
      stdio: ['ignore', capture ? 'pipe' : process.stderr, 'inherit'],
    });
  } catch (err) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${path.relative(root, cwd) || '.'}) failed: ${err.message}`);
  }
}

function writeJSON(file, value) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/** Says what went wrong and ends the script (after the finally that removes the staging directory). */
function fail(message) {
  process.stderr.write(`pack: ${message}\n`);
  process.exitCode = 1;
}
