import assert from 'node:assert/strict';
import { isMimePattern, mimeTypeMatches } from './mime-patterns';

describe('MIME type patterns', () => {
  it('accepts type/subtype with * wildcards and refuses anything else', () => {
    for (const pattern of ['text/plain', 'image/*', '*/*', 'application/*+json', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'Text/Plain']) {
      assert.equal(isMimePattern(pattern), true, pattern);
    }
    for (const pattern of ['', 'text', 'text/', '/plain', '*/json', 'text/plain; charset=utf-8', 'text /plain', 'a/b/c']) {
      assert.equal(isMimePattern(pattern), false, pattern);
    }
  });

  it('matches concrete types against patterns, ignoring case and parameters', () => {
    assert.equal(mimeTypeMatches('text/plain', 'text/plain; charset=utf-8'), true);
    assert.equal(mimeTypeMatches('text/*', 'TEXT/Markdown'), true);
    assert.equal(mimeTypeMatches('*/*', 'image/png'), true);
    assert.equal(mimeTypeMatches('application/*+json', 'application/ld+json'), true);
    assert.equal(mimeTypeMatches('image/*', 'text/plain'), false);
    assert.equal(mimeTypeMatches('text/plain', 'text/plainer'), false);
    assert.equal(mimeTypeMatches('application/*+json', 'application/json'), false);
    assert.equal(mimeTypeMatches('application/vnd.a+json', 'application/vndxa+json'), false);
  });
});
