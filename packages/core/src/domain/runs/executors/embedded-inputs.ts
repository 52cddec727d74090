import type { ResourceService } from '../../resources/resource-service';
import type { InputConfig } from '../../runnables/config-schema';
import { RunFailure } from '../run-failure';
import type { RunRecord } from '../run-record';
import { FileValue, type Scope } from './templates';

/** Bytes of one resource read into a prompt at most; vendors take far less per request anyway. */
export const MAX_EMBEDDED_BYTES = 32 * 1024 * 1024;

/**
 * The run's embedded resources as placeholder values (docs/api.md#configurations): text as text, JSON parsed (it
 * is serialized where a template uses it as text), anything else as a file of its MIME type.
 * The placeholder's declared `type` decides, else the resource's MIME type.
 */
export async function loadEmbeddedInputs(resources: ResourceService, run: RunRecord, signal: AbortSignal): Promise<Scope> {
  const declared = (run.runnable_snapshot.config_content_parsed.inputs ?? []) as InputConfig[];
  const scope: Record<string, unknown> = {};
  for (const embedded of run.resources) {
    signal.throwIfAborted();
    const resource = await resources.get(run.account_id, embedded.resource.id);
    if (resource.size_bytes > MAX_EMBEDDED_BYTES) {
      throw new RunFailure('resource_too_large', `resource ${resource.id} (${embedded.name}) has ${resource.size_bytes} bytes; at most ${MAX_EMBEDDED_BYTES} can be embedded`);
    }
    const bytes = new Uint8Array(await new Response(await resources.readContent(resource)).arrayBuffer());
    const type = declared.find((input) => input.name === embedded.name)?.type;
    scope[embedded.name] = toValue(type, resource.mime_type, resource.name, bytes, embedded.name);
  }
  return scope;
}

function toValue(type: InputConfig['type'], mimeType: string, filename: string, bytes: Uint8Array, name: string): unknown {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase();
  if (type === 'json' || essence === 'application/json' || essence.endsWith('+json')) {
    const text = new TextDecoder().decode(bytes);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new RunFailure('invalid_resource', `resource '${name}' is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (type === 'text' || essence.startsWith('text/')) return new TextDecoder().decode(bytes);
  return new FileValue(essence, bytes, filename);
}
