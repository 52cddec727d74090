import assert from 'node:assert/strict';
import { parseRunnableConfig, type PromptConfig } from './config-schema';
import { ParsedConfigCache } from './parsed-config-cache';

describe('ParsedConfigCache', () => {
  const text = 'prompt: {system: hi}\nllms: [{model: gpt-4o}]\n';

  it('parses a text once, and gives each caller a copy it may change', () => {
    const cache = new ParsedConfigCache();
    let parses = 0;
    const parse = () => {
      parses += 1;
      return parseRunnableConfig(text);
    };
    const first = cache.getOrParse('key', text, parse);
    (first.parsed as PromptConfig).llms![0]!.model = 'changed by the first caller';
    const second = cache.getOrParse('key', text, parse);
    (second.parsed as PromptConfig).prompt.system = 'changed by the second caller';
    const third = cache.getOrParse('key', text, parse);
    assert.equal(parses, 1);
    assert.deepEqual(third, parseRunnableConfig(text));
  });

  it('parses long texts every time instead of keeping them', () => {
    const cache = new ParsedConfigCache();
    const long = `${text}description: "${'x'.repeat(20_000)}"\n`;
    let parses = 0;
    for (let round = 0; round < 2; round += 1) {
      cache.getOrParse('long', long, () => {
        parses += 1;
        return parseRunnableConfig(long);
      });
    }
    assert.equal(parses, 2);
  });
});
