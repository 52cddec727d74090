import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../input/json-depth';
import {
  type AgentConfig,
  type ConfigDiagnostic,
  type FlowConfig,
  parseRunnableConfig,
  type PromptConfig,
  readRunnableConfig,
  stepDependencies,
} from './config-schema';

const RUNNABLE_ID = '0190a0b0-0000-7000-8000-000000000001';

/** Diagnostics without positions, for comparing what and where. */
function errors(text: string, enabledProviders: string[] = []): { path: string; message: string }[] {
  return parseRunnableConfig(text, { enabledProviders })
    .diagnostics.filter((diagnostic) => diagnostic.severity === 'error')
    .map(({ path, message }) => ({ path, message }));
}

function errorPaths(text: string): string[] {
  return errors(text).map((diagnostic) => diagnostic.path);
}

function parsed<T>(text: string, enabledProviders: string[] = []): T {
  const result = parseRunnableConfig(text, { enabledProviders });
  assert.deepEqual(
    result.diagnostics.filter((diagnostic) => diagnostic.severity === 'error'),
    [],
    'expected no errors',
  );
  assert.ok(result.parsed);
  return result.parsed as T;
}

const PROMPT = `
name: summarize
description: Summarizes a document
prompt:
  system: You are brief.
  messages:
    - role: user
      content: "Summarize {{document}}"
llms:
  - model: gpt-4o
    params: { temperature: 0.2, max_tokens: 200 }
inputs:
  - name: document
    mime_types: [text/plain]
`;

describe('parseRunnableConfig', () => {
  describe('prompt variant', () => {
    it('parses YAML, defaults the type to prompt and keeps every field as written', () => {
      const result = parseRunnableConfig(PROMPT);
      assert.equal(result.type, 'prompt');
      assert.deepEqual(result.diagnostics, []);
      const config = result.parsed as PromptConfig;
      assert.equal(config.name, 'summarize');
      assert.equal(config.type, undefined);
      assert.deepEqual(config.prompt, { system: 'You are brief.', messages: [{ role: 'user', content: 'Summarize {{document}}' }] });
      assert.deepEqual(config.llms, [{ model: 'gpt-4o', provider: 'openai', params: { temperature: 0.2, max_tokens: 200 } }]);
    });

    it('parses the same configuration written as JSON', () => {
      const json = JSON.stringify({
        type: 'prompt',
        prompt: { messages: [{ role: 'user', content: 'Hi {{name}}' }] },
        llms: [{ model: 'anthropic/claude-sonnet-4', is_default: true, params: {} }],
        inputs: [{ name: 'name', type: 'text', mime_types: ['text/plain'], required: false }],
        schemas: { answer: { type: 'object' } },
      });
      const config = parsed<PromptConfig>(json);
      assert.equal(config.type, 'prompt');
      assert.deepEqual(config.llms, [{ model: 'claude-sonnet-4', provider: 'anthropic', is_default: true, params: {} }]);
      assert.deepEqual(config.inputs, [{ name: 'name', type: 'text', mime_types: ['text/plain'], required: false }]);
      assert.deepEqual(config.schemas, { answer: { type: 'object' } });
    });

    it('keeps unknown fields at the top level and inside nested objects', () => {
      const config = parsed<PromptConfig>(`${PROMPT}x-team: search\ntelemetry: false\n`);
      assert.equal(config['x-team'], 'search');
      assert.equal(config.telemetry, false);
      const nested = parsed<PromptConfig>('prompt:\n  system: hi\n  style: terse\nllms:\n  - model: gpt-4o\n    region: eu\n');
      assert.equal(nested.prompt['style'], 'terse');
      assert.equal(nested.llms?.[0]?.['region'], 'eu');
    });

    it('accepts messages of every role and a prompt with only a system text', () => {
      const config = parsed<PromptConfig>(
        'prompt:\n  messages:\n    - {role: system, content: a}\n    - {role: user, content: b}\n    - {role: assistant, content: c}\n',
      );
      assert.deepEqual(
        config.prompt.messages?.map((message) => message.role),
        ['system', 'user', 'assistant'],
      );
      parsed('prompt:\n  system: only this\n');
    });

    it('refuses a message role outside system, user and assistant, and content that is not text', () => {
      assert.deepEqual(errorPaths('prompt:\n  messages:\n    - role: robot\n      content: 3\n'), [
        'prompt.messages.0.role',
        'prompt.messages.0.content',
      ]);
    });

    it('refuses a missing prompt, an empty prompt and an empty llms list, saying what to add', () => {
      assert.deepEqual(errors('llms:\n  - model: gpt-4o\n'), [{ path: 'prompt', message: 'is required' }]);
      assert.deepEqual(errors('prompt: {}\n'), [{ path: 'prompt', message: 'give prompt.system or at least one message' }]);
      assert.deepEqual(errors('prompt: {system: hi}\nllms: []\n'), [{ path: 'llms', message: 'list at least one model, or leave llms out' }]);
    });

    it('refuses wrongly typed llms fields and params', () => {
      assert.deepEqual(
        errorPaths('prompt: {system: hi}\nllms:\n  - model: 3\n    is_default: yes please\n    params: {temperature: hot, max_tokens: 0}\n'),
        ['llms.0.model', 'llms.0.is_default', 'llms.0.params.temperature', 'llms.0.params.max_tokens'],
      );
      assert.deepEqual(errorPaths('prompt: {system: hi}\nllms:\n  - provider: openai\n'), ['llms.0.model']);
    });

    it('allows one default model only, and unique model names', () => {
      assert.deepEqual(errors('prompt: {system: hi}\nllms:\n  - {model: gpt-4o, is_default: true}\n  - {model: gpt-4o-mini, is_default: true}\n'), [
        { path: 'llms.1.is_default', message: 'only one model may be the default (also llms.0)' },
      ]);
      assert.deepEqual(errorPaths('prompt: {system: hi}\nllms:\n  - {name: fast, model: gpt-4o}\n  - {name: fast, model: gpt-4o-mini}\n'), [
        'llms.1.name',
      ]);
    });

    it('warns, without failing, when no model is configured', () => {
      const result = parseRunnableConfig('prompt: {system: hi}\n');
      assert.ok(result.parsed);
      assert.deepEqual(
        result.diagnostics.map(({ path, severity }) => ({ path, severity })),
        [{ path: 'prompt', severity: 'warning' }],
      );
    });
  });

  describe('llms[].provider derivation (docs/api.md#configurations)', () => {
    const providerOf = (model: string, enabledProviders: string[] = [], provider?: string) => {
      const llm = `{model: "${model}"${provider ? `, provider: ${provider}` : ''}}`;
      const config = parsed<PromptConfig>(`prompt: {system: hi}\nllms: [${llm}]\n`, enabledProviders);
      const [first] = config.llms ?? [];
      return { provider: first?.provider, model: first?.model };
    };

    it('keeps a given provider, stripping a prefix that repeats it', () => {
      assert.deepEqual(providerOf('llama-3.3-70b', [], 'groq'), { provider: 'groq', model: 'llama-3.3-70b' });
      assert.deepEqual(providerOf('groq/llama-3.3-70b', [], 'groq'), { provider: 'groq', model: 'llama-3.3-70b' });
      assert.deepEqual(providerOf('openai/gpt-oss-120b', [], 'groq'), { provider: 'groq', model: 'openai/gpt-oss-120b' });
    });

    it('takes a provider/model prefix naming one of the seven providers, and answers the bare model', () => {
      assert.deepEqual(providerOf('anthropic/claude-x'), { provider: 'anthropic', model: 'claude-x' });
      assert.deepEqual(providerOf('azure-openai/my-deployment'), { provider: 'azure-openai', model: 'my-deployment' });
      assert.deepEqual(providerOf('aws-bedrock/anthropic.claude-3-haiku'), { provider: 'aws-bedrock', model: 'anthropic.claude-3-haiku' });
      assert.deepEqual(providerOf('mistral/open-mixtral'), { provider: 'mistral', model: 'open-mixtral' });
    });

    it('treats any other prefix as part of the model name', () => {
      assert.deepEqual(providerOf('meta-llama/llama-4-scout', ['groq']), { provider: 'groq', model: 'meta-llama/llama-4-scout' });
    });

    it('infers the provider from well-known model families', () => {
      assert.equal(providerOf('gpt-4o').provider, 'openai');
      assert.equal(providerOf('o3-mini').provider, 'openai');
      assert.equal(providerOf('o1').provider, 'openai');
      assert.equal(providerOf('claude-3-5-haiku-latest').provider, 'anthropic');
      assert.equal(providerOf('gemini-2.0-flash').provider, 'google');
      assert.equal(providerOf('mistral-large-latest').provider, 'mistral');
      assert.equal(providerOf('codestral-latest').provider, 'mistral');
    });

    it("falls back to the account's only enabled provider", () => {
      assert.deepEqual(providerOf('my-model', ['azure-openai']), { provider: 'azure-openai', model: 'my-model' });
      // Family beats the enabled provider: a claude model is Anthropic's even on a groq-only account.
      assert.equal(providerOf('claude-x', ['groq']).provider, 'anthropic');
    });

    it('asks for provider when nothing decides it, naming the seven providers', () => {
      for (const enabled of [[], ['openai', 'groq']]) {
        const [diagnostic, ...rest] = errors('prompt: {system: hi}\nllms:\n  - model: my-model\n', enabled);
        assert.equal(rest.length, 0);
        assert.equal(diagnostic?.path, 'llms.0.provider');
        assert.match(diagnostic!.message, /^set provider: .*'my-model'.*openai, anthropic, google, azure-openai, mistral, aws-bedrock, groq/);
      }
    });

    it('says whether the result depends on the enabled providers, so a caller may skip reading them', () => {
      const uses = (llms: string, enabled: string[] = []) => parseRunnableConfig(`prompt: {system: hi}\n${llms}`, { enabledProviders: enabled }).usesEnabledProviders;
      assert.equal(uses('llms: [{model: gpt-4o}, {model: groq/x}, {model: x, provider: groq}]\n'), false);
      assert.equal(uses(''), false);
      assert.equal(uses('llms: [{model: gpt-4o}, {model: my-model}]\n'), true);
      assert.equal(uses('llms: [{model: my-model}]\n', ['groq']), true);
      assert.equal(parseRunnableConfig('type: agent\nmodel: my-model\n', { enabledProviders: ['groq'] }).usesEnabledProviders, true);
    });

    it('checks a text read once with each set of options exactly as parseRunnableConfig does', () => {
      for (const text of ['type: agent\nmodel: my-model\nprompt: {system: hi}\n', 'prompt: {system: hi}\nllms: [{model: my-model}]\n', 'prompt: [unclosed\n']) {
        const read = readRunnableConfig(text);
        const alone = read.check();
        const withGroq = read.check({ enabledProviders: ['groq'] });
        assert.deepEqual(alone, parseRunnableConfig(text));
        assert.deepEqual(withGroq, parseRunnableConfig(text, { enabledProviders: ['groq'] }));
        assert.deepEqual(read.check(), alone, 'a later check starts afresh, untouched by the earlier derivations');
      }
    });

    it('refuses a provider outside the seven', () => {
      assert.deepEqual(errorPaths('prompt: {system: hi}\nllms:\n  - {model: x, provider: acme}\n'), ['llms.0.provider']);
    });
  });

  describe('inputs (placeholders)', () => {
    const inputsOf = (inputs: string) => parsed<PromptConfig>(`prompt: {system: hi}\ninputs:\n${inputs}`).inputs;

    it('derives type from the MIME types when absent: json, text, else file', () => {
      const inputs = inputsOf(
        [
          '  - {name: a, mime_types: [application/json]}',
          '  - {name: b, mime_types: [text/plain, text/*]}',
          '  - {name: c, mime_types: [image/*, text/plain]}',
          '  - {name: d, mime_types: ["*/*"]}',
          '  - {name: e, mime_types: [text/markdown], type: file}',
        ].join('\n'),
      );
      assert.deepEqual(
        inputs?.map((input) => input.type),
        ['json', 'text', 'file', 'file', 'file'],
      );
    });

    it('fills in mime_types from the type, and required as true, when absent', () => {
      const inputs = inputsOf('  - {name: a, type: text}\n  - {name: b, type: json}\n  - {name: c}\n  - {name: d, required: false}\n');
      assert.deepEqual(inputs, [
        { name: 'a', type: 'text', mime_types: ['text/*'], required: true },
        { name: 'b', type: 'json', mime_types: ['application/json'], required: true },
        { name: 'c', mime_types: ['*/*'], type: 'file', required: true },
        { name: 'd', required: false, mime_types: ['*/*'], type: 'file' },
      ]);
    });

    it('refuses duplicate names, naming the earlier one', () => {
      assert.deepEqual(errors('prompt: {system: hi}\ninputs:\n  - {name: doc}\n  - {name: other}\n  - {name: doc}\n'), [
        { path: 'inputs.2.name', message: "duplicate input name 'doc' (also inputs.0); names must be unique" },
      ]);
    });

    it('refuses names that cannot be written as {{name}}, unknown types and invalid MIME patterns', () => {
      assert.deepEqual(errorPaths('prompt: {system: hi}\ninputs:\n  - {name: "my doc"}\n  - {name: b, type: binary}\n'), [
        'inputs.0.name',
        'inputs.1.type',
      ]);
      for (const pattern of ['text', 'image/', '*/json', 'text/plain; charset=utf-8', 'a b/c']) {
        assert.deepEqual(errorPaths(`prompt: {system: hi}\ninputs:\n  - {name: a, mime_types: ["${pattern}"]}\n`), ['inputs.0.mime_types.0'], pattern);
      }
      for (const pattern of ['*/*', 'image/*', 'application/*+json', 'application/vnd.ms-excel']) {
        parsed(`prompt: {system: hi}\ninputs:\n  - {name: a, mime_types: ["${pattern}"]}\n`);
      }
      assert.deepEqual(errorPaths('prompt: {system: hi}\ninputs:\n  - {name: a, mime_types: []}\n'), ['inputs.0.mime_types']);
    });

    it('compiles metadata.schema and metadata_schema as JSON Schema draft 7', () => {
      parsed('prompt: {system: hi}\ninputs:\n  - name: a\n    metadata:\n      required: true\n      schema: {type: object, required: [source], properties: {source: {type: string}}}\n');
      parsed('prompt: {system: hi}\ninputs:\n  - {name: a, metadata_schema: {type: object}}\n  - {name: b, metadata_schema: null}\n');
      const [bad] = errors('prompt: {system: hi}\ninputs:\n  - name: a\n    metadata:\n      schema: {type: nope}\n');
      assert.equal(bad?.path, 'inputs.0.metadata.schema');
      assert.match(bad!.message, /^not a valid JSON Schema \(draft 7\): /);
      assert.deepEqual(errorPaths('prompt: {system: hi}\ninputs:\n  - {name: a, metadata_schema: {$ref: "http://example.com/missing"}}\n'), [
        'inputs.0.metadata_schema',
      ]);
      assert.deepEqual(errorPaths('prompt: {system: hi}\ninputs:\n  - {name: a, metadata_schema: [1]}\n'), ['inputs.0.metadata_schema']);
    });

    it('warns about {{name}} references that name no declared input, and accepts declared ones', () => {
      const result = parseRunnableConfig(
        'prompt:\n  system: "Use {{ doc }} and {{doc.title}}"\n  messages:\n    - {role: user, content: "{{question}}"}\nllms: [{model: gpt-4o}]\ninputs:\n  - {name: doc}\n',
      );
      assert.ok(result.parsed);
      assert.deepEqual(
        result.diagnostics.map(({ path, severity, message }) => ({ path, severity, message })),
        [
          {
            path: 'prompt.messages.0.content',
            severity: 'warning',
            message: "{{question}} names no declared input; add 'question' to inputs or it stays unfilled",
          },
        ],
      );
    });
  });

  describe('flow variant', () => {
    const FLOW = `
type: flow
llms: [{model: gpt-4o-mini}]
inputs:
  - {name: topic, type: text}
steps:
  - id: outline
    uses:
      prompt:
        messages: [{role: user, content: "Outline {{topic}} in {{count}} points"}]
    with: {count: "5"}
  - id: draft
    uses: ${RUNNABLE_ID}
    with: {outline: "{{steps.outline.output}}"}
  - id: review
    needs: [draft]
    uses: {runnable: ${RUNNABLE_ID}}
  - id: title
    uses: {transform: pick, input: "{{steps.outline.output}}", path: title}
  - id: report
    needs: [review, title]
    uses: {transform: template, template: "{{steps.title.output}}: {{steps.draft.output}}"}
output: report
`;

    it('parses steps of every kind and derives the flow-level and step-level models', () => {
      const result = parseRunnableConfig(FLOW);
      assert.deepEqual(result.diagnostics, []);
      assert.equal(result.type, 'flow');
      const flow = result.parsed as FlowConfig;
      assert.deepEqual(
        flow.steps.map((step) => step.id),
        ['outline', 'draft', 'review', 'title', 'report'],
      );
      assert.equal(flow.llms?.[0]?.provider, 'openai');
      assert.equal(flow.output, 'report');
      const withModel = parsed<FlowConfig>('type: flow\nsteps:\n  - id: a\n    uses: {prompt: {system: hi}, llms: [{model: claude-x}]}\n');
      assert.deepEqual(withModel.steps[0]?.uses, { prompt: { system: 'hi' }, llms: [{ model: 'claude-x', provider: 'anthropic' }] });
    });

    it('counts {{steps.ID.output}} references as dependencies besides needs', () => {
      const flow = parsed<FlowConfig>(FLOW);
      assert.deepEqual(stepDependencies(flow.steps[1]!), ['outline']);
      assert.deepEqual(stepDependencies(flow.steps[4]!).sort(), ['draft', 'review', 'title']);
    });

    it('refuses duplicate step ids', () => {
      assert.deepEqual(errors('type: flow\nsteps:\n  - {id: a, uses: {transform: template, template: x}}\n  - {id: a, uses: {transform: template, template: y}}\n'), [
        { path: 'steps.1.id', message: "duplicate step id 'a' (also steps.0); ids must be unique" },
      ]);
    });

    it('refuses needs that name no step, or the step itself', () => {
      assert.deepEqual(errors('type: flow\nsteps:\n  - {id: a, needs: [a, ghost], uses: {transform: template, template: x}}\n'), [
        { path: 'steps.0.needs.0', message: "step 'a' cannot need itself" },
        { path: 'steps.0.needs.1', message: "needs names no step 'ghost'; steps are a" },
      ]);
    });

    it('refuses cycles through needs and through output references', () => {
      assert.deepEqual(
        errors(
          'type: flow\nsteps:\n  - {id: a, needs: [c], uses: {transform: template, template: x}}\n  - {id: b, needs: [a], uses: {transform: template, template: x}}\n  - {id: c, needs: [b], uses: {transform: template, template: x}}\n',
        ),
        [{ path: 'steps.0.needs', message: 'steps form a cycle: a → c → b → a; a flow must be a DAG' }],
      );
      assert.deepEqual(
        errorPaths(
          'type: flow\nsteps:\n  - {id: a, uses: {transform: template, template: "{{steps.b.output}}"}}\n  - {id: b, needs: [a], uses: {transform: template, template: x}}\n',
        ),
        ['steps.0.needs'],
      );
    });

    it('refuses {{steps.ID.output}} references to steps that do not exist, wherever they appear', () => {
      assert.deepEqual(
        errorPaths(
          [
            'type: flow',
            'steps:',
            '  - {id: a, uses: {prompt: {system: "{{steps.x.output}}"}, llms: [{model: gpt-4o}]}}',
            `  - {id: b, uses: ${RUNNABLE_ID}, with: {doc: "{{steps.y.output.field}}"}}`,
            '  - {id: c, uses: {transform: template, template: "{{steps.z.output}}"}}',
          ].join('\n'),
        ),
        ['steps.0.uses.prompt.system', 'steps.1.with.doc', 'steps.2.uses.template'],
      );
    });

    it('refuses a uses that is none of the four forms, a bad runnable id and a bad transform', () => {
      assert.deepEqual(
        errors(
          [
            'type: flow',
            'steps:',
            '  - {id: a, uses: {shell: ls}}',
            '  - {id: b, uses: not-a-uuid}',
            '  - {id: c, uses: {runnable: 42}}',
            '  - {id: d, uses: {transform: sort}}',
            '  - {id: e, uses: {transform: pick, input: x}}',
            '  - {id: f}',
          ].join('\n'),
        ).map((diagnostic) => diagnostic.path),
        ['steps.0.uses', 'steps.1.uses', 'steps.2.uses.runnable', 'steps.3.uses.transform', 'steps.4.uses.path', 'steps.5.uses'],
      );
    });

    it('refuses a flow without steps, a bad step id and an output naming no step', () => {
      assert.deepEqual(errorPaths('type: flow\nsteps: []\n'), ['steps']);
      assert.deepEqual(errorPaths('type: flow\n'), ['steps']);
      assert.deepEqual(errorPaths('type: flow\nsteps:\n  - {id: "1 a", uses: {transform: template, template: x}}\n'), ['steps.0.id']);
      assert.deepEqual(errorPaths('type: flow\noutput: nope\nsteps:\n  - {id: a, uses: {transform: template, template: x}}\n'), ['output']);
    });
  });

  describe('agent variant', () => {
    const AGENT = `
type: agent
model: anthropic/claude-sonnet-4
prompt:
  system: You research {{topic}}.
inputs: [{name: topic, type: text}]
tools:
  - type: runnable
    runnable_id: ${RUNNABLE_ID}
    name: summarize
  - type: http
    name: search
    method: GET
    url: https://search.example.com/q
    parameters: {type: object, properties: {q: {type: string}}}
  - type: workspace_file_read
max_steps: 8
`;

    it('parses tools of every kind and derives provider and bare model of the model shorthand', () => {
      const result = parseRunnableConfig(AGENT);
      assert.deepEqual(result.diagnostics, []);
      assert.equal(result.type, 'agent');
      const agent = result.parsed as AgentConfig;
      assert.equal(agent.provider, 'anthropic');
      assert.equal(agent.model, 'claude-sonnet-4');
      assert.deepEqual(
        agent.tools?.map((tool) => tool.type),
        ['runnable', 'http', 'workspace_file_read'],
      );
      assert.equal(agent.max_steps, 8);
    });

    it('accepts llms instead of model, and refuses both at once', () => {
      const agent = parsed<AgentConfig>('type: agent\nllms: [{model: gemini-2.0-flash}]\n');
      assert.equal(agent.llms?.[0]?.provider, 'google');
      assert.deepEqual(errors('type: agent\nmodel: gpt-4o\nllms: [{model: gpt-4o}]\n'), [{ path: 'model', message: 'give model or llms, not both' }]);
    });

    it('asks for provider when the model shorthand names no known vendor', () => {
      assert.deepEqual(errorPaths('type: agent\nmodel: my-model\n'), ['provider']);
      assert.equal(parsed<AgentConfig>('type: agent\nmodel: my-model\nprovider: groq\n').provider, 'groq');
    });

    it('refuses bad tools: unknown type, method, non-http URL, bad ids, duplicate names, bad parameters schema', () => {
      assert.deepEqual(
        errorPaths(
          [
            'type: agent',
            'model: gpt-4o',
            'tools:',
            '  - {type: shell}',
            '  - {type: http, name: a, method: PUT, url: "ftp://x.example.com"}',
            '  - {type: runnable, runnable_id: nope}',
            '  - {type: http, method: GET, url: "https://x.example.com"}',
          ].join('\n'),
        ),
        ['tools.0.type', 'tools.1.method', 'tools.1.url', 'tools.2.runnable_id', 'tools.3.name'],
      );
      assert.deepEqual(
        errorPaths(
          'type: agent\nmodel: gpt-4o\ntools:\n  - {type: workspace_file_read, name: read}\n  - {type: http, name: read, method: GET, url: "https://x.example.com", parameters: {type: 7}}\n',
        ),
        ['tools.1.parameters', 'tools.1.name'],
      );
    });

    it('bounds max_steps to 1..100 whole steps', () => {
      for (const value of ['0', '101', '2.5', 'many']) {
        assert.deepEqual(errorPaths(`type: agent\nmodel: gpt-4o\nmax_steps: ${value}\n`), ['max_steps'], value);
      }
    });
  });

  describe('the text and its positions', () => {
    it('reports YAML syntax errors with their line and column', () => {
      const [first] = parseRunnableConfig('prompt:\n  system: hi\nllms: [\n').diagnostics;
      assert.equal(first?.severity, 'error');
      assert.equal(first?.path, '');
      assert.equal(first?.line, 4);
      const [duplicate] = parseRunnableConfig('prompt:\n  system: hi\nprompt:\n  system: again\n').diagnostics;
      assert.match(duplicate!.message, /unique/);
      assert.deepEqual([duplicate?.line, duplicate?.column], [3, 1]);
    });

    it('places schema errors on the offending node', () => {
      const text = 'prompt:\n  messages:\n    - role: user\n      content: 42\nllms:\n  - model: x\n    provider: acme\n';
      const located = (diagnostic: ConfigDiagnostic | undefined) => [diagnostic?.path, diagnostic?.line, diagnostic?.column];
      const [content, provider] = parseRunnableConfig(text).diagnostics;
      assert.deepEqual(located(content), ['prompt.messages.0.content', 4, 16]);
      assert.deepEqual(located(provider), ['llms.0.provider', 7, 15]);
    });

    it('places an error about a missing field on the nearest enclosing node', () => {
      const [missing] = parseRunnableConfig('prompt:\n  system: hi\nllms:\n  - name: fast\n').diagnostics;
      assert.deepEqual([missing?.path, missing?.line, missing?.column], ['llms.0.model', 4, 5]);
      const [derived] = parseRunnableConfig('prompt:\n  system: hi\nllms:\n  - model: mine\n').diagnostics;
      assert.deepEqual([derived?.path, derived?.line, derived?.column], ['llms.0.provider', 4, 5]);
    });

    it('locates errors in JSON text too', () => {
      const [diagnostic] = parseRunnableConfig('{\n  "prompt": {"system": 5}\n}').diagnostics;
      assert.deepEqual([diagnostic?.path, diagnostic?.line, diagnostic?.column], ['prompt.system', 2, 24]);
    });

    it('refuses empty text, a non-mapping document and an unknown type', () => {
      assert.deepEqual(errorPaths(''), ['']);
      assert.deepEqual(errorPaths('just words'), ['']);
      assert.deepEqual(errorPaths('- a\n- b\n'), ['']);
      assert.deepEqual(errors('type: chain\nprompt: {system: hi}\n'), [{ path: 'type', message: 'type must be one of prompt, flow, agent (or absent for prompt)' }]);
      assert.equal(parseRunnableConfig('type: chain\n').type, 'prompt');
    });

    it('refuses an alias bomb and deep nesting as bad input instead of throwing', () => {
      const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
      for (let level = 1; level <= 9; level++) bomb.push(`${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10).fill(`*${String.fromCharCode(96 + level)}`).join(', ')}]`);
      assert.equal(parseRunnableConfig(bomb.join('\n')).diagnostics[0]?.severity, 'error');
      const deep = `prompt: {system: hi}\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
      assert.deepEqual(
        parseRunnableConfig(deep).diagnostics.map(({ severity, message }) => ({ severity, message })),
        [{ severity: 'error', message: TOO_DEEP_MESSAGE }],
      );
    });

    it('applies the one structured-input depth limit to YAML in every spelling (flow, block, aliases)', () => {
      /** A configuration whose `metadata` field holds `depth` - 1 more levels (the root mapping is level 1). */
      const flow = (depth: number): string => `prompt: {system: hi}\nmetadata: ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}\n`;
      const block = (depth: number): string =>
        `prompt: {system: hi}\nmetadata:\n${Array.from({ length: depth - 1 }, (_, level) => `${'  '.repeat(level + 1)}k:`).join('\n')} 1\n`;
      // An anchor 40 deep used 40 deep: 80 levels once the alias is resolved.
      const aliased = (depth: number): string => {
        const half = Math.floor(depth / 2);
        return `prompt: {system: hi}\nanchor: &deep ${'['.repeat(half)}${']'.repeat(half)}\nmetadata: ${'['.repeat(depth - half - 1)}*deep${']'.repeat(depth - half - 1)}\n`;
      };
      const errors = (text: string): string[] =>
        parseRunnableConfig(text).diagnostics.filter((diagnostic) => diagnostic.severity === 'error').map((diagnostic) => diagnostic.message);
      for (const [kind, build] of [['flow', flow], ['block', block], ['alias', aliased]] as const) {
        assert.ok(!errors(build(MAX_JSON_DEPTH)).includes(TOO_DEEP_MESSAGE), `${kind} at the limit is read`);
        for (const depth of [MAX_JSON_DEPTH + 1, 3_000]) assert.deepEqual(errors(build(depth)), [TOO_DEEP_MESSAGE], `${kind} ${depth} deep`);
      }
    });
  });
});
