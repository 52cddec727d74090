import * as z from 'zod';
import { safePathSchema } from '../paths/safe-path';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * Workspace templates (docs/api.md#workspace-templates): a set of files, or a git repository to
 * clone, that a new workspace starts from.
 */

/** Most files a template holds. */
export const MAX_TEMPLATE_FILES = 1000;
/** Most bytes of all a template's files together, decoded: templates are starting points, kept in the store. */
export const MAX_TEMPLATE_BYTES = 5 * 1024 * 1024;

const templateName = lazy(() => z.string().trim().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters'));
const templateDescription = lazy(() => z.string().max(2000, 'description must be at most 2000 characters'));

export const templateFileSchema = lazySchema(() =>
  z
    .object({
      path: safePathSchema({ field: 'path', kind: 'relative' }).describe('relative to the workspace root, `/`-separated'),
      content: z.string().optional().describe('the file as UTF-8 text'),
      content_base64: z
        .string()
        .refine(isBase64, 'content_base64 must be standard base64 (A–Z, a–z, 0–9, +, / and = padding)')
        .meta({ contentEncoding: 'base64' })
        .optional()
        .describe('the file as base64 bytes, for binary files'),
    })
    .refine((file) => (file.content === undefined) !== (file.content_base64 === undefined), {
      message: 'give exactly one of content and content_base64',
    })
    .meta({ id: 'WorkspaceTemplateFile' }),
);
export type TemplateFile = z.infer<typeof templateFileSchema>;

export const templateSourceSchema = lazySchema(() =>
  z
    .object({
      url: z
        .url({ protocol: /^https?$/, error: 'url must be an http(s) URL of a git repository' })
        .refine((url) => !/^[a-z]+:\/\/[^/]*@/i.test(url), 'url must not carry credentials'),
      ref: z.string().min(1).max(255).nullish().describe("branch or tag to check out; the remote's default branch when absent"),
    })
    .meta({ id: 'WorkspaceTemplateSource' }),
);
export type TemplateSource = z.infer<typeof templateSourceSchema>;

/** `POST /workspaces/templates`: `files` or `source`, not both. */
export const createTemplateBody = lazySchema(() =>
  z
    .object({
      name: templateName(),
      description: templateDescription().nullish(),
      files: z.array(templateFileSchema).max(MAX_TEMPLATE_FILES, `a template holds at most ${MAX_TEMPLATE_FILES} files`).optional(),
      source: templateSourceSchema.optional(),
    })
    .superRefine((body, context) => {
      if ((body.files === undefined) === (body.source === undefined)) {
        context.addIssue({ code: 'custom', path: ['files'], message: 'give exactly one of files and source' });
      }
      for (const problem of fileSetProblems(body.files ?? [])) context.addIssue({ code: 'custom', ...problem });
    })
    .meta({
      id: 'WorkspaceTemplateCreate',
      examples: [{ name: 'notes', description: 'a README to start from', files: [{ path: 'README.md', content: '# Notes\n' }] }],
    }),
);
export type CreateTemplateInput = z.input<typeof createTemplateBody>;

/** The fields of a template as answered, shared by the template and its summary. */
const templateFields = lazy(() => ({
  id: z.uuid(),
  account_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  files: z.array(templateFileSchema).optional().describe('the files a new workspace gets (absent for a git source)'),
  source: templateSourceSchema.optional().describe('the repository a new workspace clones (absent for files)'),
  created_at: z.string(),
  updated_at: z.string(),
}));

export const workspaceTemplateSchema = lazySchema(() => z.object(templateFields()).meta({ id: 'WorkspaceTemplate' }));
export type WorkspaceTemplate = z.infer<typeof workspaceTemplateSchema>;

/** A template in a list: its files by path and size, without their content. */
export const workspaceTemplateSummarySchema = lazySchema(() =>
  z
    .object({ ...templateFields(), files: z.array(z.object({ path: z.string(), size: z.int() })).optional().describe('path and size (bytes) of each file') })
    .meta({ id: 'WorkspaceTemplateSummary' }),
);
export type WorkspaceTemplateSummary = z.infer<typeof workspaceTemplateSummarySchema>;

/** The file's bytes. */
export function templateFileBytes(file: TemplateFile): Uint8Array {
  if (file.content !== undefined) return new TextEncoder().encode(file.content);
  return Uint8Array.from(atob(file.content_base64!), (char) => char.charCodeAt(0));
}

/** Paths given twice, a file where another needs a directory, and too many bytes in all. */
function fileSetProblems(files: readonly TemplateFile[]): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const seen = new Map<string, number>();
  let bytes = 0;
  files.forEach((file, index) => {
    const earlier = seen.get(file.path);
    if (earlier !== undefined) problems.push({ path: ['files', index, 'path'], message: `'${file.path}' is also files.${earlier}.path: give each path once` });
    seen.set(file.path, index);
    bytes += file.content !== undefined ? new TextEncoder().encode(file.content).length : decodedLength(file.content_base64 ?? '');
  });
  files.forEach((file, index) => {
    const segments = file.path.split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = segments.slice(0, depth).join('/');
      const other = seen.get(parent);
      if (other !== undefined) {
        problems.push({ path: ['files', index, 'path'], message: `'${file.path}' needs '${parent}' to be a directory, but files.${other} is a file there` });
        break;
      }
    }
  });
  if (bytes > MAX_TEMPLATE_BYTES) problems.push({ path: ['files'], message: `a template's files hold at most ${MAX_TEMPLATE_BYTES} bytes in all (got ${bytes})` });
  return problems;
}

/** Standard base64 (RFC 4648 §4) with its padding: what `atob` decodes without guessing. */
function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

/** Bytes that standard base64 text decodes to, without decoding it. */
function decodedLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}
