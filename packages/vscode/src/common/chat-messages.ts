import type { ChatMessage } from './protocol';

/**
 * The messages between the chat panel's webview and the extension, `{type}`-tagged, typed on both
 * sides (the webview script and `client/chat-panel.ts` import this file).
 */

/** Extension → webview. */
export type ToChatView =
  /**
   * The thread as saved, the model the next message goes to, the models to offer (the setting's,
   * this thread's, those used lately) and whether a reply is streaming.
   */
  | { type: 'history'; title: string; messages: ChatMessage[]; model: string; models: string[]; streaming: boolean }
  /** Chunks of the reply being streamed (AI SDK UI message stream chunks). */
  | { type: 'chunks'; chunks: Record<string, unknown>[]; ended: boolean }
  /** The user's message was added to the thread (from the panel or a command); its reply follows. */
  | { type: 'sent'; message: ChatMessage }
  /** A request failed before any reply started (no model, no key…). */
  | { type: 'failed'; message: string }
  /** Asks what the panel shows now (answered with `rendered`). */
  | { type: 'render-report' };

/** Webview → extension. */
export type FromChatView =
  | { type: 'ready' }
  /** The thread's history is on screen: the panel is ready to use. */
  | { type: 'shown' }
  | { type: 'send'; text: string; model: string }
  | { type: 'stop' }
  /** The reply's first token is on screen. */
  | { type: 'first-token' }
  /** What the panel's DOM shows: each message's role, rendered text and status. */
  | { type: 'rendered'; streaming: boolean; messages: { role: string; text: string; status: string | undefined }[] };
