/**
 * The output of executions running in this process, readable while they run: `…/output` and
 * `…/events` take what is there so far and follow what comes next (docs/api.md#commands). Once an
 * execution ends its whole output is in its record and the entry is dropped.
 *
 * Output is kept up to a byte cap; past it, the rest is dropped and `truncated` is set. Bytes are
 * decoded as UTF-8 as they arrive (a character split across chunks is kept whole).
 */
export class LiveOutput {
  private textSoFar = '';
  private bytes = 0;
  private cut = false;
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();
  private readonly listeners = new Set<(text: string) => void>();

  constructor(private readonly maxBytes: number) {}

  get text(): string {
    return this.textSoFar;
  }

  get truncated(): boolean {
    return this.cut;
  }

  writeBytes(chunk: Uint8Array): void {
    const room = this.maxBytes - this.bytes;
    if (room <= 0) {
      this.cut ||= chunk.length > 0;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.cut = true;
    this.bytes += kept.length;
    this.emit(this.decoder.decode(kept, { stream: !this.cut }));
  }

  writeText(text: string): void {
    this.writeBytes(this.encoder.encode(text));
  }

  /** Calls `listener` with every later chunk of text, until `unsubscribe`. */
  follow(listener: (text: string) => void): { unsubscribe(): void } {
    this.listeners.add(listener);
    return { unsubscribe: () => this.listeners.delete(listener) };
  }

  /**
   * The text so far (an empty batch when there is none yet), then what comes, batch after batch
   * (what was written while the last batch was taken), until `signal` aborts: what another
   * instance following this output is sent.
   */
  async *batches(signal: AbortSignal): AsyncIterable<readonly string[]> {
    const pending: string[] = this.textSoFar === '' ? [] : [this.textSoFar];
    let wake: (() => void) | undefined;
    const following = this.follow((text) => {
      pending.push(text);
      wake?.();
    });
    const onAbort = (): void => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      // What there is now, even nothing: the answer to the instance that asked.
      yield pending.splice(0);
      for (;;) {
        if (pending.length > 0) yield pending.splice(0);
        else if (signal.aborted) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      following.unsubscribe();
      signal.removeEventListener('abort', onAbort);
    }
  }

  private emit(text: string): void {
    if (text === '') return;
    this.textSoFar += text;
    for (const listener of this.listeners) listener(text);
  }
}

/** The live outputs of this process, by execution id. */
export class LiveOutputs {
  private readonly outputs = new Map<string, LiveOutput>();

  open(executionId: string, maxBytes: number): LiveOutput {
    const output = new LiveOutput(maxBytes);
    this.outputs.set(executionId, output);
    return output;
  }

  get(executionId: string): LiveOutput | undefined {
    return this.outputs.get(executionId);
  }

  close(executionId: string): void {
    this.outputs.delete(executionId);
  }
}
