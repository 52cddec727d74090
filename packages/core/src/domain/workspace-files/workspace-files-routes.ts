import * as z from 'zod';
import { validationError } from '../errors';
import { refuseTooDeep } from '../input/json-depth';
import { presentationHeaders } from '../resources/content-disposition';
import { contentResponse, declaredLength } from '../resources/resources-routes';
import { changeEnvelope, dataEnvelope, workspaceParams } from '../workspaces/workspace-schemas';
import { ApiError } from '../../http/api-error';
import { apiErrorBody } from '../../http/error-schema';
import { readText } from '../../http/exchange';
import { route, type RouteDefinition } from '../../http/route';
import {
  directoryPathQuery,
  filePathQuery,
  moveQuery,
  searchPathsSchema,
  searchResultSchema,
  signedUploadQuery,
  type UploadRequest,
  uploadRequestSchema,
  uploadTicketSchema,
  workspaceEntrySchema,
} from './workspace-file-schemas';
import type { FileChange, WorkspaceFileService } from './workspace-file-service';
import type { WorkspaceFileUploads } from './workspace-file-uploads';
import { lazySchema } from '../lazy-schema';

const TAG = 'workspace files';

const error = (description: string) => ({ description, schema: apiErrorBody });
const refusals = {
  400: error('an unsafe path (`..`, absolute, `\\`, NUL, control characters, too long, through a symbolic link out of the root) or invalid fields'),
  404: error('no such workspace in this account, or no such file or directory'),
};
const changeRefusals = { ...refusals, 409: error('the workspace is archived, the target exists, or a file is where a directory is meant (or the reverse)') };
const entryChange = lazySchema(() => changeEnvelope(workspaceEntrySchema));
const deletion = lazySchema(() => changeEnvelope(z.object({ path: z.string() })));
const download = {
  206: { description: 'the requested byte range, with Content-Range', contentType: '*/*' },
  304: { description: 'If-None-Match matched the ETag' },
  409: error('the path is a directory'),
  416: error('the range starts past the end of the file'),
};

const UPLOAD_DESCRIPTION =
  'JSON `{size, content_type}` asks for a signed upload URL (201 `{data: {path, upload_url, expires_at}}`; `size: 0` creates an empty file ' +
  'at once). Any other media type is the file’s bytes, stored directly: a direct upload.';

export function workspaceFilesRoutes(files: WorkspaceFileService, uploads: WorkspaceFileUploads, jsonBodyLimitBytes: number): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/files',
      tag: TAG,
      summary: 'Create or upload a file: a signed upload URL for `{size, content_type}`, or the bytes of any other body directly',
      params: workspaceParams,
      query: filePathQuery,
      body: { stream: { mediaTypes: ['*/*'], description: UPLOAD_DESCRIPTION, schemas: { 'application/json': uploadRequestSchema } } },
      responses: {
        200: { description: 'the bytes replaced an existing file', schema: entryChange },
        201: { description: 'the upload URL (`data.upload_url`), or the file created', schema: lazySchema(() => z.union([dataEnvelope(uploadTicketSchema), entryChange])) },
        ...changeRefusals,
        413: error('the content (or `size`) is over the upload limit'),
      },
      handle: async (input) => {
        // `input.request` is read only on the JSON branch: a direct upload builds no web Request.
        const { principal, params, query, body, header } = input;
        if (isJson(header('content-type'))) {
          const answer = await uploads.request(principal.accountId, params.workspaceId, query.path, await uploadRequestOf(input.request, jsonBodyLimitBytes));
          if (answer.kind === 'written') return changed(answer.change, 'file');
          const url = new URL(`file/upload?${new URLSearchParams(answer.signedQuery)}`, input.request.url);
          return { status: 201, body: { data: { path: answer.path, upload_url: url.href, expires_at: answer.expires_at } } };
        }
        const content = (body as ReadableStream<Uint8Array> | null) ?? new Uint8Array(0);
        const change = await files.write(principal.accountId, params.workspaceId, query.path, content, { declaredSize: declaredLength(header('content-length')) });
        return changed(change, 'file');
      },
    }),
    route({
      method: 'PUT',
      path: '/workspace/{workspaceId}/file/upload',
      public: true,
      tag: TAG,
      summary: 'Upload the bytes to a signed upload URL (no bearer token: the URL is the credential; single use, expiring, exact size)',
      params: workspaceParams,
      query: signedUploadQuery,
      body: { stream: { mediaTypes: ['*/*'], description: 'the file’s bytes, exactly `size` of them' } },
      responses: {
        200: { description: 'the bytes replaced an existing file', schema: entryChange },
        201: { description: 'the file was created', schema: entryChange },
        400: error('the body is not exactly `size` bytes, or not of the signed content type; nothing was stored'),
        403: error('the signature does not match, or the URL expired'),
        404: refusals[404],
        409: error('the URL was already used, or the workspace is archived'),
        413: error('the content is over the upload limit'),
      },
      handle: async ({ params, query, body, header }) => {
        const change = await uploads.accept(params.workspaceId, query, body as ReadableStream<Uint8Array> | null, {
          contentType: header('content-type'),
          contentLength: declaredLength(header('content-length')),
        });
        return changed(change, 'file');
      },
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/file',
      tag: TAG,
      summary:
        'Download a file, streamed: Content-Type by extension, ETag (size and mtime) with If-None-Match, one byte range. Passive types inline; ' +
        'others (HTML, SVG, XML, JavaScript, …) as an attachment under Content-Security-Policy: sandbox',
      params: workspaceParams,
      query: filePathQuery,
      responses: { 200: { description: 'the file', contentType: '*/*' }, ...download, ...refusals },
      handle: async ({ principal, params, query, request }) => contentResponse(await files.download(principal.accountId, params.workspaceId, query.path), request),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/file/pdf',
      tag: TAG,
      summary: 'The file as PDF: a PDF as it is, DOC and DOCX converted by LibreOffice (cached by content hash)',
      params: workspaceParams,
      query: filePathQuery,
      responses: {
        200: { description: 'the PDF', contentType: 'application/pdf' },
        ...download,
        ...refusals,
        400: error('an unsafe path, a file that is not PDF, DOC or DOCX, or a document LibreOffice cannot convert'),
        501: error('LibreOffice is not installed on the server (install libreoffice-writer)'),
      },
      handle: async ({ principal, params, query, request }) => contentResponse(await files.pdf(principal.accountId, params.workspaceId, query.path), request),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/file/path',
      tag: TAG,
      summary: 'Rename or move a file to `newPath` (missing parents are created; `newPath` must not exist)',
      params: workspaceParams,
      query: moveQuery,
      responses: { 200: { description: 'the file at its new path', schema: entryChange }, ...changeRefusals },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { message: 'file moved', data: await files.moveFile(principal.accountId, params.workspaceId, query.path, query.newPath) },
      }),
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/file',
      tag: TAG,
      summary: 'Delete a file',
      params: workspaceParams,
      query: filePathQuery,
      responses: { 200: { description: 'deleted', schema: deletion }, ...changeRefusals },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { message: 'file deleted', data: await files.deleteFile(principal.accountId, params.workspaceId, query.path) },
      }),
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/directory',
      tag: TAG,
      summary: 'Create a directory and its missing parents (no body); an existing directory answers 200',
      params: workspaceParams,
      query: filePathQuery,
      responses: {
        200: { description: 'the directory existed', schema: entryChange },
        201: { description: 'the directory was created', schema: entryChange },
        ...changeRefusals,
      },
      handle: async ({ principal, params, query }) => changed(await files.createDirectory(principal.accountId, params.workspaceId, query.path), 'directory'),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/directory/path',
      tag: TAG,
      summary: 'Rename or move a directory with everything in it to `newPath` (not inside itself; `newPath` must not exist)',
      params: workspaceParams,
      query: moveQuery,
      responses: { 200: { description: 'the directory at its new path', schema: entryChange }, ...changeRefusals },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { message: 'directory moved', data: await files.moveDirectory(principal.accountId, params.workspaceId, query.path, query.newPath) },
      }),
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/directory',
      tag: TAG,
      summary: 'Delete a directory and everything in it',
      params: workspaceParams,
      query: filePathQuery,
      responses: { 200: { description: 'deleted', schema: deletion }, ...changeRefusals },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { message: 'directory deleted', data: await files.deleteDirectory(principal.accountId, params.workspaceId, query.path) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/directory/download',
      tag: TAG,
      summary: "A zip of the directory ('' or no path: the whole workspace), files stored uncompressed, streamed as it is written, with its Content-Length",
      params: workspaceParams,
      query: directoryPathQuery,
      responses: { 200: { description: 'the zip', contentType: 'application/zip' }, ...refusals, 409: error('the path is a file, or a name in the directory cannot be put in a zip') },
      handle: async ({ principal, params, query }) => {
        const { name, size, stream } = await files.zip(principal.accountId, params.workspaceId, query.path);
        return new Response(stream, {
          status: 200,
          headers: {
            ...presentationHeaders(name, 'application/zip'),
            'content-type': 'application/zip',
            'content-length': String(size),
            'cache-control': 'no-store',
          },
        });
      },
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/search/paths',
      tag: TAG,
      summary: 'Find files and directories by glob (picomatch), relative to the root, down to maxDepth',
      params: workspaceParams,
      body: { json: searchPathsSchema },
      responses: { 200: { description: 'the matches, sorted by path', schema: lazySchema(() => dataEnvelope(z.array(searchResultSchema))) }, ...refusals },
      handle: async ({ principal, params, body }) => ({ status: 200, body: { data: await files.searchPaths(principal.accountId, params.workspaceId, body) } }),
    }),
  ];
}

/** `{message, data}` of a write: 201 when the entry is new, 200 when it was there. */
function changed({ entry, created }: FileChange, kind: 'file' | 'directory'): { status: number; body: unknown } {
  const message = created ? `${kind} created` : kind === 'file' ? 'file replaced' : 'directory exists';
  return { status: created ? 201 : 200, body: { message, data: entry } };
}

function isJson(contentType: string | null): boolean {
  const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || essence.endsWith('+json');
}

/** The JSON body of a signed-upload request, read within the JSON limit and checked like any JSON body. */
async function uploadRequestOf(request: Request, limit: number): Promise<UploadRequest> {
  const text = await readText(request, limit);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (failure) {
    throw new ApiError('MALFORMED_JSON', `the body is not valid JSON: ${(failure as Error).message}`);
  }
  refuseTooDeep(raw, 'body');
  const parsed = uploadRequestSchema.safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}
