import { Ajv, type ValidateFunction } from 'ajv';

let sharedAjv: Ajv | undefined;

/**
 * JSON Schema (draft 7, docs/api.md#configurations) for placeholder metadata and tool parameters. One validator
 * instance for the process, made on first use (a server that never compiles a schema never loads
 * ajv); `strict: false` because user schemas may carry annotations ajv does not know (`x-…`),
 * which draft 7 allows.
 */
function ajv(): Ajv {
  sharedAjv ??= new Ajv({ strict: false, allErrors: true });
  return sharedAjv;
}

/**
 * Compiles a draft-7 schema, throwing an `Error` that says what is wrong when it does not compile
 * (unknown type, bad `$ref`, a `$schema` other than draft 7, …).
 */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv().compile(schema);
  } finally {
    // ajv caches by schema object (and `$id`); user schemas arrive as new objects each time, so
    // dropping the entry keeps the cache from growing and lets the same `$id` compile again.
    ajv().removeSchema(schema);
  }
}

/** The validation errors of the last call of `validate`, as one readable sentence. */
export function describeJsonSchemaErrors(validate: ValidateFunction): string {
  return ajv().errorsText(validate.errors, { dataVar: 'metadata' });
}
