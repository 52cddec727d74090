/**
 * The one syntax of placeholders in runnable configurations: `{{reference}}`, a dot path with
 * optional spaces inside the braces (`{{ customer.name }}`). The config validator
 * (`config-schema.ts`) checks the references with it and the renderer
 * (`runs/executors/templates.ts`) fills them with it, so the two never disagree on what is a
 * placeholder (docs/api.md#configurations).
 */
const REFERENCE_SOURCE = String.raw`\{\{\s*([^{}]*?)\s*\}\}`;

/**
 * Every reference in a text; group 1 is the reference. Global: use it with `matchAll` and
 * `replace` only, which do not keep state between calls (`exec`/`test` would).
 */
export const TEMPLATE_REFERENCE = new RegExp(REFERENCE_SOURCE, 'g');

/** A text that is exactly one reference (its value passes through unchanged); group 1 is the reference. */
export const SOLE_TEMPLATE_REFERENCE = new RegExp(`^${REFERENCE_SOURCE}$`);
