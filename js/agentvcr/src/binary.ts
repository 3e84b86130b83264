// Where the recorder binary is: AGENTVCR_BINARY, else the platform package
// npm installed beside agentvcr (the esbuild and Biome pattern: one
// optional dependency per platform, of which npm installs the one whose
// os and cpu match).
import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The platforms agentvcr publishes a binary for, as
 * `${process.platform}-${process.arch}`: each is the package
 * `@agentvcr/<platform>` (see {@link platformPackage}).
 */
export const platforms = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'] as const;

/**
 * The name of the package that carries the recorder binary for a platform
 * (this process's by default), e.g. `@agentvcr/linux-x64`, so that a
 * message, a script or a bundler configuration can name it.
 */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string {
  return `@agentvcr/${platform}-${arch}`;
}

/**
 * The path of the recorder binary that agentvcr runs (startProxy, `npx
 * agentvcr`): the file AGENTVCR_BINARY names, when set, so that a checkout
 * or a platform without a package can bring its own; else bin/recorder
 * (recorder.exe on Windows) of this platform's package,
 * {@link platformPackage}. Throws an Error that says what to do when
 * AGENTVCR_BINARY names no executable file or the package is not
 * installed.
 */
export function resolveBinary(): string {
  const override = process.env.AGENTVCR_BINARY;
  if (override) {
    const file = path.resolve(override);
    let problem: string | undefined;
    try {
      if (!statSync(file).isFile()) problem = 'is not a file';
      else accessSync(file, constants.X_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problem = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not executable (chmod +x it)' : String(err);
    }
    if (problem) {
      throw new Error(
        `agentvcr: AGENTVCR_BINARY=${override} ${problem}: point it at a recorder binary ` +
          '(go build -o recorder github.com/agentvcr/agentvcr/cmd/recorder), or unset it to use the one agentvcr installed',
      );
    }
    return file;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = platformPackage();
  const exe = process.platform === 'win32' ? 'recorder.exe' : 'recorder';
  try {
    return createRequire(import.meta.url).resolve(`${pkg}/bin/${exe}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
  }
  const why = (platforms as readonly string[]).includes(platform)
    ? `npm installs it as an optional dependency of agentvcr: reinstall without --omit=optional (or --no-optional), ` +
      `and with this platform's node_modules (a lockfile or node_modules from another OS lacks it)`
    : `agentvcr publishes binaries for ${platforms.join(', ')} only`;
  throw new Error(
    `agentvcr: no recorder binary for ${platform}: the package ${pkg} is not installed (${why}). ` +
      'Or set AGENTVCR_BINARY to a recorder binary (go build -o recorder github.com/agentvcr/agentvcr/cmd/recorder).',
  );
}
