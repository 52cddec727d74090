import * as z from 'zod';
import { ApiError } from '../../http/api-error';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { presentationHeaders } from './content-disposition';
import { entityTag, noneMatch, parseRange, rangeStillApplies } from './byte-range';
import type { ByteRange } from '../../ports/blob-store';
import { listQuerySchema, resourceIdParams, resourcePatchSchema, resourceSchema } from './resource-schemas';
import type { ResourceService } from './resource-service';
import { ResourceUploads, uploadFieldsFromQuery } from './resource-uploads';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** An upload's fields as query parameters: a plain object, which the form extends. */
const uploadQueryObject = lazy(() =>
  z.object({
    name: z.string().optional().describe('required for a raw upload; in a form, defaults to the file part’s filename'),
    directory_path: z.string().optional(),
    tags: z.union([z.string(), z.array(z.string())]).optional().describe('repeated, or one JSON array'),
    metadata: z.string().optional().describe('a JSON object, as text'),
    original_uri: z.string().optional(),
    external_id: z.string().optional(),
    external_storage_type: z.string().optional().describe('s3, gcs or azure_blob'),
    created_by: z.string().optional(),
  }),
);
const uploadQuery = lazySchema(uploadQueryObject);

/** The multipart form of an upload: the `file` part and the query's fields as text fields. */
const uploadForm = lazySchema(() =>
  uploadQueryObject()
    .extend({ file: z.string().meta({ format: 'binary', description: 'the content; its Content-Type becomes mime_type' }) })
    .meta({ id: 'ResourceUploadForm' }),
);

const UPLOAD_DESCRIPTION =
  'Either multipart/form-data with one part named `file` (the content; its Content-Type becomes mime_type) and text fields ' +
  '`name`, `directory_path`, `tags` (repeated, or one JSON array), `metadata` (JSON object text), `original_uri`, `external_id`, ' +
  '`external_storage_type`, `created_by` — before or after the file part — or the raw bytes with `?name=&directory_path=` and the ' +
  'body’s Content-Type as mime_type. Query parameters give the same fields; form fields override them.';

const errors = {
  400: { description: 'invalid fields or body', schema: apiErrorBody },
  401: { description: 'missing or invalid bearer token', schema: apiErrorBody },
  404: { description: 'no such resource in this account', schema: apiErrorBody },
};

export function resourcesRoutes(resources: ResourceService, uploads: ResourceUploads): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      path: '/v1/resources',
      tag: 'resources',
      summary: 'Upload a resource (multipart form or raw bytes), streamed into the blob store',
      query: uploadQuery,
      body: {
        stream: { mediaTypes: ['multipart/form-data', '*/*'], description: UPLOAD_DESCRIPTION, schemas: { 'multipart/form-data': uploadForm } },
      },
      responses: {
        201: { description: 'the stored resource', schema: resourceSchema },
        400: errors[400],
        401: errors[401],
        413: { description: 'the content is over the upload limit', schema: apiErrorBody },
        503: { description: 'the blob store is unavailable (an S3 service that does not answer, say); nothing was kept', schema: apiErrorBody },
      },
      handle: async ({ principal, query, body, header }) => {
        const contentType = header('content-type');
        const fields = uploadFieldsFromQuery(query);
        const stream = body as ReadableStream<Uint8Array> | null;
        const resource =
          contentType !== null && /^multipart\/form-data\s*(;|$)/i.test(contentType)
            ? await uploads.fromForm(principal.accountId, stream ?? emptyBody(), contentType, fields)
            : await uploads.fromBytes(principal.accountId, stream, { contentType, contentLength: declaredLength(header('content-length')) }, fields);
        return { status: 201, body: resource };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/resources',
      tag: 'resources',
      summary: 'List resources, oldest first, by directory and tags (all must match)',
      query: listQuerySchema,
      responses: { 200: { description: 'a page of resources', schema: lazySchema(() => z.array(resourceSchema)) }, 400: errors[400], 401: errors[401] },
      handle: async ({ principal, query }) => ({ status: 200, body: await resources.list(principal.accountId, query) }),
    }),
    route({
      method: 'GET',
      path: '/v1/resource/{id}',
      tag: 'resources',
      summary: 'Get a resource record',
      params: resourceIdParams,
      responses: { 200: { description: 'the resource', schema: resourceSchema }, 401: errors[401], 404: errors[404] },
      handle: async ({ principal, params }) => ({ status: 200, body: await resources.get(principal.accountId, params.id) }),
    }),
    route({
      method: 'GET',
      path: '/v1/resource/{id}/content',
      tag: 'resources',
      summary:
        'Download the content: ETag is the sha256; If-None-Match and single byte ranges are honoured. Passive types (text, images, audio, video, PDF, JSON) ' +
        'are served inline; every other type (HTML, SVG, XML, JavaScript, …) as an attachment under Content-Security-Policy: sandbox',
      params: resourceIdParams,
      responses: {
        200: { description: 'the whole content, as the media type it was stored with', contentType: '*/*' },
        206: { description: 'the requested byte range, with Content-Range', contentType: '*/*' },
        304: { description: 'If-None-Match matched the ETag' },
        401: errors[401],
        404: errors[404],
        416: { description: 'the range starts past the end of the content', schema: apiErrorBody },
        503: { description: 'the blob store is unavailable (an S3 service that does not answer, say)', schema: apiErrorBody },
      },
      handle: async ({ principal, params, request }) => {
        const resource = await resources.get(principal.accountId, params.id);
        return contentResponse(
          {
            name: resource.name,
            mediaType: resource.mime_type,
            size: resource.size_bytes,
            etag: entityTag(resource.sha256),
            read: (range) => resources.readContent(resource, range),
          },
          request,
        );
      },
    }),
    route({
      method: 'PATCH',
      path: '/v1/resource/{id}',
      tag: 'resources',
      summary: 'Change name, directory_path, tags, metadata, original_uri or the external_* fields',
      params: resourceIdParams,
      body: { json: resourcePatchSchema },
      responses: { 200: { description: 'the updated resource', schema: resourceSchema }, ...errors },
      handle: async ({ principal, params, body }) => ({ status: 200, body: await resources.update(principal.accountId, params.id, body) }),
    }),
    route({
      method: 'DELETE',
      path: '/v1/resource/{id}',
      tag: 'resources',
      summary: 'Delete a resource; its bytes go when no other resource shares them',
      params: resourceIdParams,
      responses: {
        200: { description: 'deleted', schema: lazySchema(() => z.object({ id: z.string() })) },
        401: errors[401],
        404: errors[404],
        409: { description: 'a queued or running run embeds the resource', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({ status: 200, body: await resources.delete(principal.accountId, params.id) }),
    }),
  ];
}

/** Stored content as a client downloads it (resource content, workspace files). */
export interface DownloadableContent {
  /** File name for Content-Disposition. */
  name: string;
  mediaType: string;
  size: number;
  /** A strong entity tag of these bytes (`entityTag(...)`). */
  etag: string;
  read(range?: ByteRange): Promise<ReadableStream<Uint8Array>>;
}

/**
 * The download answer of stored content: ETag with If-None-Match (304), one byte range (206, 416
 * past the end, If-Range), and how to present it (`presentationHeaders`: passive types inline,
 * others as a sandboxed attachment). Workspace file downloads answer through it too.
 */
export async function contentResponse(content: DownloadableContent, request: Request): Promise<Response> {
  const { etag, size } = content;
  const common = {
    etag,
    'accept-ranges': 'bytes',
    'cache-control': 'private, no-cache',
    ...presentationHeaders(content.name, content.mediaType),
  };
  if (noneMatch(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: common });
  const answer = rangeStillApplies(request.headers.get('if-range'), etag) ? parseRange(request.headers.get('range'), size) : { kind: 'whole' as const };
  if (answer.kind === 'unsatisfiable') {
    throw new ApiError('RANGE_NOT_SATISFIABLE', `the range starts past the end of the content (${size} bytes)`, undefined, {
      'content-range': `bytes */${size}`,
    });
  }
  const headers = { ...common, 'content-type': content.mediaType };
  if (answer.kind === 'whole') {
    return new Response(await content.read(), { status: 200, headers: { ...headers, 'content-length': String(size) } });
  }
  const { start, end } = answer.range;
  return new Response(await content.read(answer.range), {
    status: 206,
    headers: { ...headers, 'content-length': String(end - start + 1), 'content-range': `bytes ${start}-${end}/${size}` },
  });
}

/** The Content-Length the client declared, when it is a plain decimal (uploads refuse past their limit before reading). */
export function declaredLength(header: string | null): number | null {
  return header === null || !/^\d+$/.test(header) ? null : Number(header);
}

function emptyBody(): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
}
