import { strict as assert } from 'node:assert';
import { tmpdir } from 'node:os';
import { type LaunchedProcess, ProcessLaunchError, type ProcessLauncher } from '../ports/process-launcher';

/** The one contract every `ProcessLauncher` adapter passes (POSIX programs: sh, printf, sleep). */
export function describeProcessLauncherContract(name: string, create: () => ProcessLauncher): void {
  describe(`ProcessLauncher contract: ${name}`, () => {
    let launcher: ProcessLauncher;
    const cwd = tmpdir();
    beforeEach(() => {
      launcher = create();
    });

    async function outputOf(launched: LaunchedProcess): Promise<string> {
      const decoder = new TextDecoder();
      let text = '';
      for await (const chunk of launched.output) text += decoder.decode(chunk, { stream: true });
      return text + decoder.decode();
    }

    it('passes each argv element as one argument, never through a shell', async () => {
      const tricky = ['a b', '$(echo pwned)', '`id`', '; rm -rf /', '"quoted"', '*', '|', '&&', "it's"];
      const launched = await launcher.launch({ argv: ['printf', '[%s]\\n', ...tricky], cwd });
      assert.equal(await outputOf(launched), tricky.map((arg) => `[${arg}]\n`).join(''));
      assert.deepEqual(await launched.exited, { exitCode: 0, signal: null });
    });

    it('merges stdout and stderr, answers the exit code and runs in cwd with the extra environment', async () => {
      const launched = await launcher.launch({ argv: ['sh', '-c', 'echo out; echo err >&2; echo "$PWD:$EXTRA"; exit 3'], cwd, env: { EXTRA: 'yes' } });
      const lines = (await outputOf(launched)).trim().split('\n').sort();
      assert.deepEqual(lines, [`${await realCwd(launcher, cwd)}:yes`, 'err', 'out'].sort());
      assert.deepEqual(await launched.exited, { exitCode: 3, signal: null });
    });

    it('rejects a program that cannot start with ProcessLaunchError', async () => {
      await assert.rejects(launcher.launch({ argv: ['/no/such/program-runloom'], cwd }), ProcessLaunchError);
      await assert.rejects(launcher.launch({ argv: ['sh'], cwd: '/no/such/dir-runloom' }), ProcessLaunchError);
    });

    it('kill() ends the whole process group, grandchildren included', async () => {
      // The child starts a grandchild and prints its pid, then waits on it.
      const launched = await launcher.launch({ argv: ['sh', '-c', 'sleep 300 & echo $!; wait'], cwd });
      const iterator = launched.output[Symbol.asyncIterator]();
      const first = await iterator.next();
      const grandchild = Number(new TextDecoder().decode(first.value).trim());
      assert.ok(isAlive(grandchild), 'the grandchild runs');
      launched.kill();
      assert.equal((await launched.exited).signal, 'SIGKILL');
      await waitGone(grandchild);
    });

    it('ends once the program exits, even when it left a background process holding the output', async () => {
      const launched = await launcher.launch({ argv: ['sh', '-c', 'sleep 300 & echo $!'], cwd });
      const grandchild = Number((await outputOf(launched)).trim());
      assert.equal((await launched.exited).exitCode, 0);
      await waitGone(grandchild);
    });
  });
}

/** The folder `cwd` resolves to (macOS's /tmp is a link), as the program sees it. */
async function realCwd(launcher: ProcessLauncher, cwd: string): Promise<string> {
  const launched = await launcher.launch({ argv: ['pwd'], cwd });
  let text = '';
  for await (const chunk of launched.output) text += new TextDecoder().decode(chunk);
  await launched.exited;
  return text.trim();
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A killed process disappears once init has reaped it: checked until then, bounded for a broken build. */
async function waitGone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
