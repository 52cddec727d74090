import * as z from 'zod';
import { modelChoiceSchema } from '../workspaces/workspace-config';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * Threads (docs/api.md#threads): the records a chat UI keeps, their messages in the AI SDK's
 * UIMessage shape (`{id, role, parts, metadata?}`), so `useChat` state is saved and read back as
 * it is. Parts keep fields this file does not name (provider metadata, tool states): they belong
 * to the client.
 */

/** A thread id: a path parameter and a file name (`.runloom/threads/<id>.json`), so no dots or slashes. */
export const threadIdSchema = lazy(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'a thread id is 1 to 128 letters, digits, _ or -')
    .meta({ examples: ['0196b3c4-6a1e-7c3b-9a52-5d0c2f8e1a77'] }),
);

const toolPartType = lazy(() => z.templateLiteral(['tool-', z.string().min(1)]));
const dataPartType = lazy(() => z.templateLiteral(['data-', z.string().min(1)]));

/** One part of a UI message: the AI SDK's part types, checked for the fields each needs. */
export const uiMessagePartSchema = lazySchema(() =>
  z
    .union([
      z.looseObject({ type: z.literal('text'), text: z.string() }),
      z.looseObject({ type: z.literal('reasoning'), text: z.string() }),
      z.looseObject({ type: z.literal('file'), mediaType: z.string(), url: z.string() }),
      z.looseObject({ type: z.literal('source-url'), sourceId: z.string(), url: z.string() }),
      z.looseObject({ type: z.literal('source-document'), sourceId: z.string(), mediaType: z.string(), title: z.string() }),
      z.looseObject({ type: z.literal('step-start') }),
      z.looseObject({ type: z.literal('dynamic-tool'), toolName: z.string(), toolCallId: z.string(), state: z.string() }),
      z.looseObject({ type: toolPartType(), toolCallId: z.string(), state: z.string() }),
      z.looseObject({ type: dataPartType(), data: z.unknown() }),
    ])
    .meta({ id: 'UIMessagePart' }),
);

export type UIMessagePart = z.infer<typeof uiMessagePartSchema>;

export const uiMessageSchema = lazy(() =>
  z
    .object({
      id: z.string().min(1, 'a message id must not be empty').max(256, 'a message id is at most 256 characters'),
      role: z.enum(['system', 'user', 'assistant']),
      parts: z.array(uiMessagePartSchema),
      metadata: z.unknown().optional(),
    })
    .meta({ id: 'UIMessage', examples: [{ id: 'msg-1', role: 'user', parts: [{ type: 'text', text: 'Hello' }] }] }),
);

export type UIMessage = z.infer<ReturnType<typeof uiMessageSchema>>;

const title = lazy(() => z.string().max(1000, 'title is at most 1000 characters').nullable());
const summary = lazy(() => z.string().nullable());
const metadata = lazySchema(() => z.record(z.string(), z.unknown()));
const messages = lazySchema(() => z.array(uiMessageSchema()).max(10_000, 'a thread holds at most 10000 messages'));

/** A thread as stored in its file and answered. */
export const threadSchema = lazySchema(() =>
  z
    .object({
      id: threadIdSchema(),
      title: title(),
      messages,
      summary: summary(),
      metadata,
      created_at: z.string(),
      updated_at: z.string(),
    })
    .meta({ id: 'Thread' }),
);

export type Thread = z.infer<typeof threadSchema>;

/** A thread as listed: what the metadata index holds; `problem` says why its file cannot be read. */
export const threadMetadataSchema = lazySchema(() =>
  z
    .object({
      id: z.string(),
      workspace_id: z.string(),
      title: z.string().nullable(),
      message_count: z.int(),
      created_at: z.string().nullable(),
      updated_at: z.string(),
      problem: z.string().nullable().describe('null, or why the thread file cannot be read (fix it or save the thread anew)'),
    })
    .meta({ id: 'ThreadMetadata' }),
);

export type ThreadMetadata = z.infer<typeof threadMetadataSchema>;

/** `POST …/thread/{threadId}/save`: the whole thread; what is left out starts empty. */
export const saveThreadBody = lazySchema(() =>
  z
    .object({ title: title().optional(), messages: messages.optional(), summary: summary().optional(), metadata: metadata.optional() })
    .meta({ id: 'ThreadSave' }),
);
export type SaveThreadInput = z.infer<typeof saveThreadBody>;

/**
 * `PATCH …/thread/{threadId}`: `messages` are merged by id (a message with a known id replaces
 * it in place, a new one is appended), so two clients adding messages at once both keep theirs;
 * `metadata` replaces the whole object.
 */
export const patchThreadBody = lazySchema(() =>
  z
    .object({ title: title().optional(), messages: messages.optional(), summary: summary().optional(), metadata: metadata.optional() })
    .meta({ id: 'ThreadPatch' }),
);
export type PatchThreadInput = z.infer<typeof patchThreadBody>;

/** `PATCH …/thread/{threadId}/metadata`: title and metadata, never messages. */
export const patchThreadMetadataBody = lazySchema(() =>
  z.object({ title: title().optional(), metadata: metadata.optional() }).meta({ id: 'ThreadMetadataPatch' }),
);
export type PatchThreadMetadataInput = z.infer<typeof patchThreadMetadataBody>;

/** `POST …/threads/stream`: the user message as a UI message or plain text. */
export const streamThreadBody = lazySchema(() => {
  const uiMessage = uiMessageSchema();
  return z
    .object({
      threadId: threadIdSchema(),
      message: z.union([z.string(), uiMessage.extend({ id: uiMessage.shape.id.optional(), role: z.literal('user') })]),
      model: modelChoiceSchema.optional().describe("overrides the workspace config's models.default"),
    })
    .meta({
      id: 'ThreadStreamRequest',
      examples: [{ threadId: 'chat-1', message: 'Hello', model: { provider: 'openai', model: 'gpt-4o-mini' } }],
    });
});
export type StreamThreadInput = z.infer<typeof streamThreadBody>;
