import MiniSearch from 'minisearch';
import type { Command } from './command-schemas';

/**
 * Full-text search and autocomplete over a workspace's commands, with minisearch. The index is
 * built per request from the commands the database index holds: a workspace has tens or hundreds
 * of commands, which index in well under a millisecond, and a fresh index can never be stale.
 */

export interface ScoredCommand {
  command: Command;
  score: number;
}

/** Full text over trigger, name, description and template; best first (ties: most used). */
export function searchCommands(commands: readonly Command[], query: string): ScoredCommand[] {
  const index = indexOf(commands, ['trigger', 'name', 'description', 'template']);
  const hits = index.search(query, { prefix: true, fuzzy: 0.2, boost: { trigger: 3, name: 2 }, combineWith: 'OR' });
  return hits
    .map((hit) => ({ command: commands[hit.id as number]!, score: hit.score }))
    .sort((a, b) => b.score - a.score || b.command.usage_count - a.command.usage_count || a.command.trigger.localeCompare(b.command.trigger));
}

/**
 * Autocomplete (an empty query: the most used commands): every word of `query` must match a word of the trigger or the name by prefix or
 * with a typo (fuzzy). Ranked: a trigger starting with the query first, then a name starting with
 * it, then the rest; within a rank by score, then by use.
 */
export function suggestCommands(commands: readonly Command[], query: string, limit: number): ScoredCommand[] {
  // Nothing typed yet: what is used most.
  if (query.trim() === '') return [...commands].sort(byUse).slice(0, limit).map((command) => ({ command, score: 0 }));
  const index = indexOf(commands, ['trigger', 'name']);
  const typed = query.toLowerCase();
  const rank = (command: Command): number => (command.trigger.startsWith(typed) ? 0 : command.name.toLowerCase().startsWith(typed) ? 1 : 2);
  return index
    // A typo is allowed in words of four letters or more: in shorter ones any word is one edit away.
    .search(query, { prefix: true, fuzzy: (term) => (term.length >= 4 ? 0.25 : false), boost: { trigger: 2 }, combineWith: 'AND' })
    .map((hit) => ({ command: commands[hit.id as number]!, score: hit.score }))
    .sort(
      (a, b) =>
        rank(a.command) - rank(b.command) ||
        b.score - a.score ||
        byUse(a.command, b.command),
    )
    .slice(0, limit);
}

function byUse(a: Command, b: Command): number {
  return b.usage_count - a.usage_count || (b.last_used_at ?? '').localeCompare(a.last_used_at ?? '') || a.trigger.localeCompare(b.trigger);
}

function indexOf(commands: readonly Command[], fields: (keyof Command)[]): MiniSearch<{ id: number } & Partial<Command>> {
  const index = new MiniSearch<{ id: number } & Partial<Command>>({ fields, idField: 'id' });
  index.addAll(commands.map((command, id) => ({ ...command, id })));
  return index;
}
