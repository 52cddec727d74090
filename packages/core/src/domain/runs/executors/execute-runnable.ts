import type { AgentConfig, FlowConfig, InputConfig, PromptConfig } from '../../runnables/config-schema';
import { RunFailure } from '../run-failure';
import { executeAgent } from './agent-executor';
import type { Execution, StepOutcome } from './execution-types';
import { executeFlow } from './flow-executor';
import { executePrompt } from './prompt-executor';
import type { Scope } from './templates';

/**
 * Runs a runnable's configuration with `inputs` filling its placeholders: the run itself, a flow
 * step that uses another runnable, an agent's runnable tool.
 */
export function executeRunnable(execution: Execution, type: string, config: Record<string, unknown>, inputs: Scope): Promise<StepOutcome> {
  const scope = withDeclaredInputs(config.inputs as InputConfig[] | undefined, inputs);
  switch (type) {
    case 'prompt': {
      const prompt = config as PromptConfig;
      const step = prompt.name ?? 'prompt';
      return execution.telemetry.step(step, 'prompt', (telemetry) => executePrompt(execution.within(telemetry), prompt, scope, step));
    }
    case 'flow':
      return executeFlow(execution, config as FlowConfig, scope);
    case 'agent':
      return executeAgent(execution, config as AgentConfig, scope);
    default:
      throw new RunFailure('invalid_runnable', `runnables of type '${type}' cannot run; the type must be prompt, flow or agent`);
  }
}

/** Every declared input in scope: a missing optional one reads as empty text, a missing required one fails. */
function withDeclaredInputs(declared: readonly InputConfig[] | undefined, inputs: Scope): Scope {
  const scope: Record<string, unknown> = { ...inputs };
  for (const input of declared ?? []) {
    if (scope[input.name] !== undefined) continue;
    if (input.required !== false) throw new RunFailure('missing_input', `input '${input.name}' is required but was not given`);
    scope[input.name] = '';
  }
  return scope;
}
