import type { ValidateFunction } from 'ajv';
import { DomainError, type ErrorDetail } from '../errors';
import type { Resource } from '../resources/resource-record';
import type { ResourceService } from '../resources/resource-service';
import { type InputConfig, metadataSchemaOf } from '../runnables/config-schema';
import { compileJsonSchema, describeJsonSchemaErrors } from '../runnables/json-schema';
import { mimeTypeMatches } from '../runnables/mime-patterns';
import type { RunResource } from './run-record';
import type { ParsedRunRequest } from './run-schemas';

/** Compiled metadata schemas, by their JSON text: runs of one runnable reuse them. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 256;

/**
 * Checks a run's embedded resources against the runnable's placeholders before the run is accepted
 * (docs/api.md#runs): every name must be a placeholder, given once; every required placeholder filled;
 * each resource must be the caller's (else 404), of an accepted MIME type, and its metadata must
 * satisfy the placeholder's JSON Schema (draft 7). Every 400 lists all problems in `details`.
 * Answers the resources as the run record keeps them.
 */
export async function checkEmbeddedResources(
  resources: ResourceService,
  accountId: string,
  declared: readonly InputConfig[],
  embedded: ParsedRunRequest['resources'],
): Promise<RunResource[]> {
  const placeholders = new Map(declared.map((input) => [input.name, input]));
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  embedded.forEach(({ name }, index) => {
    if (seen.has(name)) details.push({ path: `resources.${index}.name`, message: `'${name}' is given more than once` });
    seen.add(name);
    if (!placeholders.has(name)) {
      const known = declared.length > 0 ? `it declares ${declared.map((input) => input.name).join(', ')}` : 'it declares none';
      details.push({ path: `resources.${index}.name`, message: `the runnable has no placeholder named '${name}'; ${known}` });
    }
  });
  for (const input of declared) {
    if (input.required !== false && !seen.has(input.name)) {
      details.push({ path: 'resources', message: `placeholder '${input.name}' is required: add {name: '${input.name}', resource: <id>}` });
    }
  }
  failOn(details);

  const records: Resource[] = [];
  for (const entry of embedded) {
    const id = typeof entry.resource === 'string' ? entry.resource : entry.resource.id;
    records.push(await resources.get(accountId, id));
  }

  embedded.forEach(({ name }, index) => {
    const resource = records[index]!;
    const input = placeholders.get(name)!;
    const accepted = input.mime_types ?? ['*/*'];
    if (!accepted.some((pattern) => mimeTypeMatches(pattern, resource.mime_type))) {
      details.push({
        path: `resources.${index}.resource`,
        message: `resource ${resource.id} is ${resource.mime_type}, but placeholder '${name}' accepts ${accepted.join(', ')}`,
      });
    }
    const metadataProblem = checkMetadata(input, resource.metadata);
    if (metadataProblem) details.push({ path: `resources.${index}.resource`, message: `resource ${resource.id}: ${metadataProblem}` });
  });
  failOn(details);

  return embedded.map(({ name }, index) => {
    const resource = records[index]!;
    return { name, resource: { id: resource.id, name: resource.name, mime_type: resource.mime_type, sha256: resource.sha256, size_bytes: resource.size_bytes } };
  });
}

/** What is wrong with a resource's metadata for a placeholder; undefined when nothing is. */
function checkMetadata(input: InputConfig, metadata: Record<string, unknown> | null): string | undefined {
  const schema = metadataSchemaOf(input);
  if (metadata === null) {
    // docs/api.md#configurations: a metadata_schema that is not null means metadata is required.
    const required = input.metadata?.required ?? (input.metadata_schema !== null && input.metadata_schema !== undefined);
    return required ? `placeholder '${input.name}' requires metadata, and the resource has none` : undefined;
  }
  if (!schema) return undefined;
  const validate = validatorFor(schema);
  return validate(metadata) ? undefined : `its metadata does not match placeholder '${input.name}': ${describeJsonSchemaErrors(validate)}`;
}

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.clear();
    validate = compileJsonSchema(schema);
    validators.set(key, validate);
  }
  return validate;
}

function failOn(details: ErrorDetail[]): void {
  if (details.length === 0) return;
  const first = details[0]!;
  throw DomainError.invalid(`the run's resources do not fit the runnable: ${first.path}: ${first.message}`, details);
}
