/**
 * Waits for an event the test cannot subscribe to (a record reaching a state, a queue going idle):
 * resolves once `condition` holds, checked now and then every few ms; fails naming `what` after
 * `timeoutMs`, a bound for a broken build, not a measure of anything.
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
