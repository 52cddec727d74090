/**
 * Asks the runner (test-support/code-server-runner.ts) for a picture of the workbench as it is now,
 * when RUNLOOM_VSCODE_SCREENSHOTS names a folder; otherwise nothing. The runner takes it when it
 * reads this log line, so the suite holds the screen still for a moment.
 */
export async function screenshot(name: string): Promise<void> {
  if (!process.env.RUNLOOM_VSCODE_SCREENSHOTS) return;
  console.log(`[runloom-screenshot] ${name}`);
  await new Promise((resolve) => setTimeout(resolve, 2000));
}
