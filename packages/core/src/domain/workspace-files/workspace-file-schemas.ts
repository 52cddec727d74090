import * as z from 'zod';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * The HTTP shapes of workspace files and directories (docs/api.md#workspace-files). Paths are
 * checked by the service (`domain/paths/safe-path.ts`), so the facade and HTTP refuse the same
 * paths with the same messages.
 */

/** Deepest `maxDepth` of a path search; a file directly under the root has depth 1. */
export const MAX_SEARCH_DEPTH = 64;
/** Longest glob pattern, in characters (a path's bound). */
export const MAX_GLOB_LENGTH = 4096;

const pathField = lazy(() => z.string().describe('relative to the workspace root, `/`-separated (no `..`, `\\`, NUL or control characters)'));

export const filePathQuery = lazySchema(() => z.object({ path: pathField() }));
export const directoryPathQuery = lazySchema(() =>
  z.object({ path: pathField().describe("relative to the workspace root; '' or absent: the whole workspace").optional() }),
);
export const moveQuery = lazySchema(() =>
  z.object({ path: pathField().describe('what to move'), newPath: pathField().describe('where it goes; must not exist') }),
);

export const workspaceEntrySchema = lazySchema(() =>
  z
    .object({
      path: z.string(),
      type: z.enum(['file', 'directory']),
      size: z.int().describe('bytes of a file; 0 for a directory'),
      mtime: z.string().describe('last modification, ISO 8601'),
    })
    .meta({ id: 'WorkspaceEntry' }),
);
export type WorkspaceEntryJson = z.infer<typeof workspaceEntrySchema>;

export const uploadRequestSchema = lazySchema(() =>
  z
    .object({
      size: z.int().min(0).describe('exact bytes the PUT will carry; 0 creates an empty file at once'),
      content_type: z.string().max(255).optional().describe('media type the PUT will send (optional; checked when the PUT sends one)'),
    })
    .meta({ id: 'WorkspaceUploadRequest', examples: [{ size: 11, content_type: 'text/plain' }] }),
);
export type UploadRequest = z.infer<typeof uploadRequestSchema>;

export const uploadTicketSchema = lazySchema(() =>
  z
    .object({
      path: z.string(),
      upload_url: z.string().describe('PUT the bytes here, without a bearer token: signed, single use, expiring'),
      expires_at: z.string().describe('ISO 8601; the URL is refused after it'),
    })
    .meta({ id: 'WorkspaceUploadTicket' }),
);

/** The signed query of an upload URL, exactly as `POST …/files` wrote it. */
export const signedUploadQuery = lazySchema(() =>
  z.object({
    path: z.string(),
    size: z.string(),
    content_type: z.string().optional(),
    expires: z.string(),
    nonce: z.string(),
    account: z.string(),
    signature: z.string(),
  }),
);
export type SignedUploadQuery = z.infer<typeof signedUploadQuery>;

export const searchPathsSchema = lazySchema(() =>
  z
    .object({
      globPattern: z.string().min(1, 'globPattern must not be empty').max(MAX_GLOB_LENGTH).describe('picomatch glob, relative to the root (`**/*.md`)'),
      maxDepth: z
        .int('maxDepth must be an integer')
        .min(1, 'maxDepth must be at least 1')
        .max(MAX_SEARCH_DEPTH, `maxDepth must be at most ${MAX_SEARCH_DEPTH}`)
        .default(10)
        .describe('deepest level searched; a file directly under the root has depth 1'),
      stats: z.boolean().default(false).describe('add size and mtime to each entry'),
    })
    .meta({ id: 'WorkspacePathSearch', examples: [{ globPattern: '**/*.md', maxDepth: 10, stats: true }] }),
);
export type SearchPathsInput = z.input<typeof searchPathsSchema>;

export const searchResultSchema = lazySchema(() =>
  z
    .object({
      path: z.string(),
      type: z.enum(['file', 'directory']),
      size: z.int().optional().describe('with stats'),
      mtime: z.string().optional().describe('with stats, ISO 8601'),
    })
    .meta({ id: 'WorkspacePathMatch' }),
);
export type SearchResult = z.infer<typeof searchResultSchema>;
