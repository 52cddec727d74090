import { locateYamlPath } from '@runloom/core';
import { LineCounter, parseDocument } from 'yaml';
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
  return validate(value).map((problem) => ({ ...problem, severity: 'error', ...locateYamlPath(document, lineCounter, pathSegments(problem.path)) }));
}

/** A dot path's segments, array indexes as numbers (as `Document.getIn` takes them). */
function pathSegments(path: string): (string | number)[] {
  return path === '' ? [] : path.split('.').map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}
