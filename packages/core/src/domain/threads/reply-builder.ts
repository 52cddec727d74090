import type { ModelFinishReason, ModelStreamEvent, ModelUsage } from '../../ports/model-gateway';
import type { UIMessage, UIMessagePart } from './thread-schemas';

/**
 * A chunk of the AI SDK's UI message stream (`uiMessageChunkSchema` of the `ai` package: `start`,
 * `start-step`, `text-start`/`text-delta`/`text-end`, `reasoning-*`, `tool-input-available`,
 * `finish-step`, `finish`, `error`, `abort`), as written to the SSE stream (docs/api.md#thread-streams).
 */
export type UIMessageChunk = { type: string } & Record<string, unknown>;

/** How a reply ended, as its saved message's `metadata.status` says. */
export type ReplyStatus = 'streaming' | 'complete' | 'error' | 'cancelled' | 'interrupted';

/** What the saved assistant message's `metadata` holds. */
export interface ReplyMetadata {
  status: ReplyStatus;
  model: { provider: string; model: string };
  streamId: string;
  usage?: ModelUsage;
  finishReason?: ModelFinishReason;
  /** Why the reply stopped early (status error, cancelled or interrupted). */
  error?: string;
}

/**
 * Turns the model gateway's events into UI message chunks and, from the same events, builds the
 * assistant UIMessage that is saved: what a client assembles from the chunks (`readUIMessageStream`)
 * and what the thread keeps are the same message.
 */
export class ReplyBuilder {
  private readonly parts: UIMessagePart[] = [];
  /** The text or reasoning part being streamed, with its chunk id. */
  private open: { kind: 'text' | 'reasoning'; id: string; part: { type: 'text' | 'reasoning'; text: string; state?: string } } | undefined;
  private blocks = 0;
  private ended = false;

  constructor(
    readonly messageId: string,
    private metadata: ReplyMetadata,
  ) {}

  start(): UIMessageChunk[] {
    // The part `readUIMessageStream` adds for `start-step`: the saved message is the streamed one.
    this.parts.push({ type: 'step-start' });
    return [{ type: 'start', messageId: this.messageId, messageMetadata: this.metadata }, { type: 'start-step' }];
  }

  /** The chunks of one gateway event (a terminal one ends the reply: see `finish`, `fail`). */
  push(event: ModelStreamEvent): UIMessageChunk[] {
    switch (event.type) {
      case 'text-delta':
        return this.delta('text', event.text);
      case 'reasoning-delta':
        return this.delta('reasoning', event.text);
      case 'tool-call': {
        const chunks = this.close();
        this.parts.push({ type: 'dynamic-tool', toolName: event.toolName, toolCallId: event.toolCallId, state: 'input-available', input: event.input });
        chunks.push({ type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.input, dynamic: true });
        return chunks;
      }
      case 'finish':
        return this.finish(event.finishReason, event.usage);
      case 'error':
        return this.fail('error', event.error.message);
    }
  }

  /** Ends the reply as the model finished it. */
  finish(finishReason: ModelFinishReason, usage: ModelUsage): UIMessageChunk[] {
    const chunks = this.close();
    this.ended = true;
    this.metadata = { ...this.metadata, status: 'complete', usage, finishReason };
    chunks.push({ type: 'finish-step' }, { type: 'finish', finishReason, messageMetadata: this.metadata });
    return chunks;
  }

  /**
   * Ends the reply early: an `error` chunk carrying `reason` (a vendor error, the idle bound), or
   * an `abort` chunk when the reply was cancelled; what was streamed so far stays in the message.
   */
  fail(status: 'error' | 'cancelled' | 'interrupted', reason: string): UIMessageChunk[] {
    if (this.ended) return [];
    const chunks = this.close();
    this.ended = true;
    this.metadata = { ...this.metadata, status, error: reason };
    chunks.push(status === 'cancelled' ? { type: 'abort', reason } : { type: 'error', errorText: reason });
    chunks.push({ type: 'message-metadata', messageMetadata: this.metadata });
    return chunks;
  }

  get done(): boolean {
    return this.ended;
  }

  /** The assistant message as streamed so far (whole once the reply has ended). */
  message(): UIMessage {
    const streaming = !this.ended;
    const parts = this.parts.map((part) => (part === this.open?.part && streaming ? { ...part, state: 'streaming' } : part));
    return { id: this.messageId, role: 'assistant', parts, metadata: this.metadata };
  }

  private delta(kind: 'text' | 'reasoning', text: string): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (this.open?.kind !== kind) {
      chunks.push(...this.close());
      this.blocks += 1;
      const id = `${kind}-${this.blocks}`;
      // As `readUIMessageStream` builds them: reasoning parts keep their chunk id, text parts do not.
      const part = kind === 'reasoning' ? { type: kind, id, text: '' } : { type: kind, text: '' };
      this.parts.push(part);
      this.open = { kind, id, part };
      chunks.push({ type: `${kind}-start`, id });
    }
    this.open!.part.text += text;
    chunks.push({ type: `${kind}-delta`, id: this.open!.id, delta: text });
    return chunks;
  }

  /** Ends the open text or reasoning part, if any. */
  private close(): UIMessageChunk[] {
    const open = this.open;
    if (!open) return [];
    this.open = undefined;
    open.part.state = 'done';
    return [{ type: `${open.kind}-end`, id: open.id }];
  }
}
