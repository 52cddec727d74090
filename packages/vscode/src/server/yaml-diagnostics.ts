import { LineCounter, parseDocument, type Document } from 'yaml';
import type { FileDiagnostic } from './language-features';

/** A problem a validation names by its dot path into the value (`phases.0.tasks.1.type`). */
export interface PathProblem {
  path: string;
  message: string;
}

/**
 * Diagnoses YAML text with a validation of its value: a syntax error where the parser stopped, and
 * each problem the validation names at the node of its path (or its deepest existing parent), so a
 * file kind whose core validation reports paths only still gets located diagnostics.
 */
export function diagnoseYaml(text: string, validate: (value: unknown) => PathProblem[]): FileDiagnostic[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntax = document.errors[0];
  if (syntax) {
    const { line, col } = lineCounter.linePos(syntax.pos[0]);
    return [{ path: '', message: syntax.message, severity: 'error', line, column: col }];
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return [{ path: '', message: `the file cannot be read as YAML: ${(error as Error).message}`, severity: 'error', line: 1, column: 1 }];
  }
  return validate(value).map((problem) => ({ ...problem, severity: 'error', ...locate(document, lineCounter, problem.path) }));
}

function locate(document: Document, lineCounter: LineCounter, path: string): { line?: number; column?: number } {
  const segments = path === '' ? [] : path.split('.').map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
  for (let depth = segments.length; depth >= 0; depth -= 1) {
    const node = depth === 0 ? document.contents : document.getIn(segments.slice(0, depth), true);
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range) {
      const { line, col } = lineCounter.linePos(range[0]);
      return { line, column: col };
    }
  }
  return {};
}
