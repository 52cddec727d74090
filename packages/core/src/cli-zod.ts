/**
 * The zod builders the CLI's option schemas call, from the core's copy (a server parses one zod, not
 * two), exported as `z`. Not all of zod: a namespace of every zod export costs a getter per export
 * (~900) defined when the bundle loads, which a start never reads. A builder the CLI needs is one
 * more name here.
 */
export { array, string } from 'zod';
export type { core, ZodType } from 'zod';
