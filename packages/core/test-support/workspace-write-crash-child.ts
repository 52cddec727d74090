import { NodeWorkspaceFileSystems } from '../src/adapters/node/node-workspace-file-system';

/**
 * Child process of the workspace kill -9 test: writes files forever, each `f-<n>.bin` holding
 * `crashContent(n)`, four writes at a time, and prints `n` once its write resolved.
 * Usage: workspace-write-crash-child.ts BASE_DIR
 */
const WRITERS = 4;

/** What file `n` holds: its size and bytes follow from `n`, so a torn or mixed-up file shows. */
export function crashContent(n: number): Uint8Array {
  const bytes = new Uint8Array(1 + ((n * 7919) % 300_000));
  for (let index = 0; index < bytes.byteLength; index += 1) bytes[index] = (n + index) % 251;
  return bytes;
}

async function main(): Promise<void> {
  const base = process.argv[2];
  if (!base) throw new Error('usage: workspace-write-crash-child.ts BASE_DIR');
  const files = await new NodeWorkspaceFileSystems(base).open('crash');
  let next = 0;
  const writer = async (): Promise<never> => {
    for (;;) {
      const n = next++;
      await files.writeFile(`d-${n % 5}/f-${n}.bin`, crashContent(n));
      process.stdout.write(`${n}\n`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
