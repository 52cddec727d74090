import * as z from 'zod';

/** Most distinct tags a list filter takes: no record holds more (see the records' tag schemas). */
export const MAX_FILTER_TAGS = 100;

/**
 * A `tags` query filter: repeated (`tags=a&tags=b`) or comma-separated (`tags=a,b`), empty entries
 * dropped, duplicates dropped, at most MAX_FILTER_TAGS distinct tags of at most `maxLength`
 * characters (400 beyond). The store then gets one bounded list, whatever the client sent.
 */
export function tagsQuery(options: { maxLength: number; trim: boolean }) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((value, context) => {
      const entries = [value]
        .flat()
        .flatMap((entry) => entry.split(','))
        .map((entry) => (options.trim ? entry.trim() : entry))
        .filter((entry) => entry.length > 0);
      const tags = [...new Set(entries)];
      if (tags.length > MAX_FILTER_TAGS) {
        context.addIssue({ code: 'custom', message: `filter by at most ${MAX_FILTER_TAGS} distinct tags (got ${tags.length})` });
        return z.NEVER;
      }
      const long = tags.find((tag) => tag.length > options.maxLength);
      if (long !== undefined) {
        context.addIssue({ code: 'custom', message: `a tag is at most ${options.maxLength} characters (got one of ${long.length})` });
        return z.NEVER;
      }
      return tags;
    })
    .describe(`tags the record must all have: repeated, or comma-separated; at most ${MAX_FILTER_TAGS} distinct`);
}
