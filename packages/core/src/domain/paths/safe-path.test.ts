import assert from 'node:assert/strict';
import { MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH, pathProblem, type SafePathRules } from './safe-path';

const segment: SafePathRules = { field: 'name', kind: 'segment' };
const relative: SafePathRules = { field: 'path', kind: 'relative' };
const rooted: SafePathRules = { field: 'directory_path', kind: 'rooted' };

/** Every control character: C0, DEL and C1. */
const CONTROLS = [...Array.from({ length: 0x20 }, (_, code) => code), ...Array.from({ length: 0x21 }, (_, offset) => 0x7f + offset)].map((code) =>
  String.fromCharCode(code),
);

describe('pathProblem (the one path-safety check)', () => {
  it('accepts ordinary names and paths', () => {
    for (const value of ['report.pdf', 'a b.txt', '.env', '...', 'ü😀.md', 'x'.repeat(MAX_SEGMENT_LENGTH)]) assert.equal(pathProblem(value, segment), undefined, value);
    for (const value of ['a', 'a/b', 'a/b/', 'a/.hidden/c', 'a/.../b']) assert.equal(pathProblem(value, relative), undefined, value);
    for (const value of ['/', '/a', '/a/b/', 'a/b']) assert.equal(pathProblem(value, rooted), undefined, value);
  });

  it("refuses '..' and '.' segments wherever they stand", () => {
    for (const rules of [relative, rooted]) {
      for (const value of ['..', '../a', 'a/..', 'a/../b', 'a/../../..', '.', './a', 'a/.', 'a/./b']) {
        assert.match(pathProblem(value, rules) ?? '', /'\.\.' segments|'\.' segments/, `${rules.kind} ${value}`);
      }
    }
    for (const value of ['..', '.']) assert.ok(pathProblem(value, segment), value);
    assert.match(pathProblem('/../etc', rooted)!, /'\.\.'/);
  });

  it("refuses '\\', NUL and every control character, saying which", () => {
    for (const rules of [segment, relative, rooted]) {
      for (const value of ['a\\b', '..\\..\\x', '\\']) assert.match(pathProblem(value, rules)!, /'\\'/, `${rules.kind} ${value}`);
      assert.match(pathProblem('a\u0000b', rules)!, /NUL/);
      for (const control of CONTROLS.filter((char) => char !== '\u0000')) {
        assert.match(pathProblem(`a${control}b`, rules)!, /control characters \(found U\+/, `${rules.kind} U+${control.charCodeAt(0).toString(16)}`);
      }
    }
  });

  it('refuses separators where they do not belong and empty segments', () => {
    assert.match(pathProblem('a/b', segment)!, /single name without '\/'/);
    assert.match(pathProblem('/a', relative)!, /must be relative/);
    for (const value of ['a//b', '//', '/a//']) assert.match(pathProblem(value, rooted)!, /empty segments/, value);
    assert.match(pathProblem('', segment)!, /must not be empty/);
    assert.equal(pathProblem('', { ...relative, allowEmpty: true }), undefined);
  });

  it('refuses over-long names, segments and paths, naming the limit', () => {
    assert.match(pathProblem('x'.repeat(MAX_SEGMENT_LENGTH + 1), segment)!, new RegExp(`at most ${MAX_SEGMENT_LENGTH} characters`));
    assert.match(pathProblem(`a/${'x'.repeat(MAX_SEGMENT_LENGTH + 1)}`, relative)!, new RegExp(`over ${MAX_SEGMENT_LENGTH} characters`));
    assert.match(pathProblem('a/'.repeat(MAX_PATH_LENGTH), relative)!, new RegExp(`at most ${MAX_PATH_LENGTH} characters`));
  });
});
