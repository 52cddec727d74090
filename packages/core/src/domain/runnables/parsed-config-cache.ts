import type { ParsedRunnableConfig } from './config-schema';
import { lazyLruCache } from '../lazy';

/** Configurations remembered; with texts of at most MAX_TEXT_LENGTH this holds a few MB at worst. */
const MAX_ENTRIES = 256;
/** Longer texts are parsed every time: they are rare, and would crowd out the rest. */
const MAX_TEXT_LENGTH = 16 * 1024;

/**
 * Recent results of `parseRunnableConfig` by a key naming the text (its SHA-256) and any input the
 * result depends on. Parsing YAML is most of a create's CPU, and clients create and update with
 * the same texts again and again. Results are kept as JSON, the form every record is stored in,
 * so each caller gets its own copy, free to change, from a JSON.parse.
 */
export class ParsedConfigCache {
  private readonly results = lazyLruCache<string, string>({ max: MAX_ENTRIES });

  /** The result remembered under `key`, else `parse()`'s, remembered when `text` is short enough. */
  getOrParse(key: string, text: string, parse: () => ParsedRunnableConfig): ParsedRunnableConfig {
    const cached = this.results().get(key);
    if (cached !== undefined) return JSON.parse(cached) as ParsedRunnableConfig;
    const result = parse();
    if (text.length <= MAX_TEXT_LENGTH) this.results().set(key, JSON.stringify(result));
    return result;
  }
}
