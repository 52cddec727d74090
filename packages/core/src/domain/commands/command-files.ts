import { parse, stringify } from 'yaml';
import { withinDepthLimit } from '../input/json-depth';
import { type CommandDefinition, commandDefinitionSchema, TRIGGER_PATTERN } from './command-schemas';

/**
 * Commands live in the workspace as one YAML file each, `.runloom/commands/<trigger>.yaml`, so
 * they travel with the folder (git, a zip, the VS Code extension) and can be edited by hand; the
 * database holds only an index of them and their usage (docs/api.md#commands). Pure: the service
 * reads and writes the files.
 */
export const COMMANDS_DIR = '.runloom/commands';
const EXTENSION = '.yaml';

/** A command file larger than this is a mistake, not a command: it is skipped. */
export const MAX_COMMAND_FILE_BYTES = 256 * 1024;

/** What a command file holds: the definition and its timestamps. */
export interface CommandFile extends CommandDefinition {
  created_at: string;
  updated_at: string;
}

export function commandPath(trigger: string): string {
  return `${COMMANDS_DIR}/${trigger}${EXTENSION}`;
}

/** The trigger a file name stands for, or undefined for a file that is not a command. */
export function triggerOfFile(fileName: string): string | undefined {
  if (!fileName.endsWith(EXTENSION)) return undefined;
  const trigger = fileName.slice(0, -EXTENSION.length);
  return trigger.length <= 64 && TRIGGER_PATTERN.test(trigger) ? trigger : undefined;
}

export function serializeCommand(command: CommandFile): string {
  const { trigger: _trigger, ...fields } = command;
  return `# Runloom command '${command.trigger}' (the file name is its trigger)\n${stringify(fields)}`;
}

/**
 * The command a file holds, or why it cannot be read (a hand edit gone wrong): the trigger comes
 * from the file name, timestamps missing from a hand-written file default to `fallbackTime`.
 */
export function parseCommandFile(trigger: string, text: string, fallbackTime: string): { command: CommandFile } | { problem: string } {
  let raw: unknown;
  try {
    raw = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    return { problem: `not YAML: ${(error as Error).message}` };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'not a YAML mapping' };
  if (!withinDepthLimit(raw)) return { problem: 'nested too deep' };
  const fields = raw as Record<string, unknown>;
  const parsed = commandDefinitionSchema.safeParse({ ...fields, trigger });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `${issue.path.join('.') || 'file'}: ${issue.message}` };
  }
  const timestamp = (value: unknown): string => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? value : fallbackTime);
  return { command: { ...parsed.data, created_at: timestamp(fields.created_at), updated_at: timestamp(fields.updated_at) } };
}
