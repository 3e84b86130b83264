// A stand-in until H-pack's binary.ts lands (same name and signature).

/**
 * resolveBinary returns the path of the recorder binary startProxy runs:
 * AGENTVCR_BINARY when set, else an Error saying how to get one.
 */
export function resolveBinary(): string {
  const fromEnv = process.env.AGENTVCR_BINARY;
  if (fromEnv) return fromEnv;
  throw new Error(
    'agentvcr: no recorder binary: set AGENTVCR_BINARY to its path, or install agentvcr with its platform package',
  );
}
