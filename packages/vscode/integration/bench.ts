import * as vscode from 'vscode';
import type { RunloomExtensionApi } from '../src/client/extension';
import type { ThreadListItem } from '../src/common/protocol';

/**
 * `npm run bench -- vscode` runs this instead of the test suite, in the same real VS Code: it
 * reads the extension's own start-up timings and times a reply's first token in the chat panel,
 * then logs one `[runloom-bench] {json}` line for bench/vscode.bench.ts.
 */
export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<RunloomExtensionApi>('runloom.runloom-vscode')!;
  const api = await extension.activate();
  const firstAnswerMs = await api.timings.firstAnswerMs;
  await api.ready;
  await vscode.commands.executeCommand('runloom.setProviderApiKey', {
    provider: 'openai',
    api_key: process.env.RUNLOOM_TEST_OPENAI_KEY!,
    base_url: process.env.RUNLOOM_TEST_OPENAI_URL!,
  });
  const firstTokenMs: number[] = [];
  for (let round = 0; round < Number(process.env.RUNLOOM_BENCH_ROUNDS ?? 5); round += 1) {
    const thread = await vscode.commands.executeCommand<ThreadListItem>('runloom.newThread', `bench ${round}`);
    const panel = await api.openThread(thread.workspaceId, thread.threadId);
    const shown = panel.firstToken();
    const sentAt = performance.now();
    await panel.send('Say hello', 'openai/gpt-4o');
    await shown;
    firstTokenMs.push(performance.now() - sentAt);
    panel.panel.dispose();
  }
  console.log(`[runloom-bench] ${JSON.stringify({ activationMs: api.timings.activationMs, firstAnswerMs, firstTokenMs })}`);
}
