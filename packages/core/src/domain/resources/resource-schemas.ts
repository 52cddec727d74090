import * as z from 'zod';
import { pageQueryFields } from '../input/page-query';
import { tagsQuery } from '../input/tags-query';
import { MAX_SEGMENT_LENGTH, safePathSchema } from '../paths/safe-path';
import { EXTERNAL_STORAGE_TYPES } from './resource-record';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** No name, path or tag may hold control characters: they break logs, headers and file systems. */
function noControlCharacters(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}
const MAX_METADATA_BYTES = 256 * 1024;

const name = lazy(() =>
  safePathSchema({ field: 'name', kind: 'segment' }).describe(
    `file-like name, e.g. report.pdf: one name of at most ${MAX_SEGMENT_LENGTH} characters, without '/', '\\', '..' or control characters`,
  ),
);
const directoryPath = lazy(() =>
  safePathSchema({ field: 'directory_path', kind: 'rooted' }).describe(
    "directory containing the resource, e.g. /contracts/2024; default /. '/'-separated, without '..' or '.' segments, '\\' or control characters",
  ),
);
const tag = lazy(() =>
  z
    .string()
    .min(1, 'a tag must not be empty')
    .max(256, 'a tag must be at most 256 characters')
    .refine((value) => noControlCharacters(value) && !value.includes(','), 'a tag must not contain commas or control characters'),
);
const tags = lazySchema(() => z.array(tag()).max(100, 'at most 100 tags'));
const metadata = lazySchema(() =>
  z
    .record(z.string(), z.unknown())
    .nullable()
    .refine((value) => JSON.stringify(value).length <= MAX_METADATA_BYTES, `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON`)
    .describe('free-form JSON object'),
);
const mimeType = lazy(() =>
  z
    .string()
    .max(255, 'mime_type must be at most 255 characters')
    .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'mime_type must look like type/subtype, e.g. application/pdf')
    .refine(noControlCharacters, 'mime_type must not contain control characters'),
);
const optionalText = (max: number, field: string) =>
  z.string().max(max, `${field} must be at most ${max} characters`).refine(noControlCharacters, `${field} must not contain control characters`).nullable();

/** Fields a caller may set, on upload and with PATCH. `original_uri` and the `external_*` fields are kept as given. */
const editableFields = lazy(() => ({
  name: name(),
  directory_path: directoryPath(),
  tags,
  metadata,
  original_uri: optionalText(4096, 'original_uri').describe('original address of the content, kept as given'),
  external_id: optionalText(1024, 'external_id'),
  external_storage_type: z.enum(EXTERNAL_STORAGE_TYPES).nullable(),
}));

/** What creating a resource takes besides its bytes. */
export const newResourceSchema = lazy(() => {
  const editable = editableFields();
  return z.object({
    ...editable,
    directory_path: directoryPath().default('/'),
    tags: tags.default([]),
    metadata: metadata.default(null),
    mime_type: mimeType().default('application/octet-stream'),
    original_uri: editable.original_uri.default(null),
    external_id: editable.external_id.default(null),
    external_storage_type: editable.external_storage_type.default(null),
    created_by: optionalText(256, 'created_by').default(null).describe('user id'),
  });
});
export type NewResource = z.input<ReturnType<typeof newResourceSchema>>;

/** PATCH body: every given field replaces the stored one; unknown fields are ignored. */
export const resourcePatchSchema = lazySchema(() => {
  const editable = editableFields();
  return z.object({
    ...editable,
    name: name().optional(),
    directory_path: directoryPath().optional(),
    tags: tags.nullable().optional().describe('null clears the tags'),
    metadata: metadata.optional(),
    original_uri: editable.original_uri.optional(),
    external_id: editable.external_id.optional(),
    external_storage_type: editable.external_storage_type.optional(),
  }).meta({ id: 'ResourceUpdate' });
});
export type ResourcePatch = z.input<typeof resourcePatchSchema>;

export const listQuerySchema = lazySchema(() =>
  z.object({
    directory_path: directoryPath().optional().describe('only resources in exactly this directory'),
    tags: tagsQuery({ maxLength: 256, trim: false }).optional(),
    ...pageQueryFields(),
  }),
);
export type ResourceListQuery = z.output<typeof listQuerySchema>;

export const resourceSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    account_id: z.string(),
    name: z.string(),
    directory_path: z.string(),
    mime_type: z.string(),
    sha256: z.string().describe('lowercase hex SHA-256 of the content'),
    original_uri: z.string().nullable(),
    external_id: z.string().nullable(),
    external_storage_type: z.enum(EXTERNAL_STORAGE_TYPES).nullable(),
    storage_bucket: z.string(),
    storage_key: z.string(),
    size_bytes: z.number().int(),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }).meta({ id: 'Resource' }),
);

export const resourceIdParams = lazySchema(() => z.object({ id: z.uuid('id must be a UUID') }));
