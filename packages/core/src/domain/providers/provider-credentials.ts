import * as z from 'zod';
import { DomainError, type ErrorDetail } from '../errors';
import { lazy } from '../lazy';
import type { ProviderName } from '../../ports/provider-names';

/** `{api_key, base_url?}`: every vendor that authenticates with one key. */
export interface ApiKeyCredentials {
  api_key: string;
  base_url?: string;
}

/** The model names the deployment, so the resource (or a full `base_url`) is all Azure needs. */
export interface AzureOpenAiCredentials {
  api_key: string;
  resource_name?: string;
  base_url?: string;
  api_version?: string;
}

export type AwsBedrockCredentials = { region: string; base_url?: string } & (
  | { access_key_id: string; secret_access_key: string; session_token?: string }
  | { api_key: string }
);

/** The credentials of each provider once validated (docs/api.md#providers). */
export interface ProviderCredentials {
  openai: ApiKeyCredentials;
  anthropic: ApiKeyCredentials;
  google: ApiKeyCredentials;
  'azure-openai': AzureOpenAiCredentials;
  mistral: ApiKeyCredentials;
  'aws-bedrock': AwsBedrockCredentials;
  groq: ApiKeyCredentials;
}

/** Fields whose values are secrets: sealed at rest and masked in every answer. */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['api_key', 'access_key_id', 'secret_access_key', 'session_token']);

const MAX_SECRET_LENGTH = 8192;

function text(field: string, maxLength: number): z.ZodString {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(maxLength, `${field} must be at most ${maxLength} characters`);
}

const secret = (field: string): z.ZodString => text(field, MAX_SECRET_LENGTH);

type Shape = Record<string, z.ZodType>;

interface CredentialSpec {
  shape: Shape;
  /** The accepted fields as errors show them, e.g. `{api_key, base_url?}`. */
  accepted: string;
  /** Cross-field rules, checked only for an enabled provider. */
  check?: (credentials: Record<string, unknown>, context: z.RefinementCtx) => void;
}

/**
 * Each provider's credential rules and schemas, made on first use: made at load, they were a few
 * milliseconds of every start, and only requests that set a provider's credentials need them.
 */
const credentialRules = lazy(() => {
  /** Every provider accepts a `base_url` (proxies, gateways, compatible servers, tests). */
  const baseUrl = z
    .url({ protocol: /^https?$/, error: 'base_url must be an http(s) URL, e.g. https://gateway.example.com/v1' })
    .max(2048, 'base_url must be at most 2048 characters')
    .optional();

  const apiKeySpec: CredentialSpec = { shape: { api_key: secret('api_key'), base_url: baseUrl }, accepted: '{api_key, base_url?}' };

  const specs: Record<ProviderName, CredentialSpec> = {
    openai: apiKeySpec,
    anthropic: apiKeySpec,
    google: apiKeySpec,
    'azure-openai': {
      shape: {
        api_key: secret('api_key'),
        resource_name: text('resource_name', 255)
          .regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/, 'resource_name must be an Azure resource name (letters, digits and hyphens)')
          .optional(),
        base_url: baseUrl,
        api_version: text('api_version', 64).optional(),
      },
      accepted: '{api_key, resource_name | base_url, api_version?}',
      check: (credentials, context) => {
        if (credentials.resource_name === undefined && credentials.base_url === undefined) {
          context.addIssue({ code: 'custom', path: ['resource_name'], message: 'azure-openai needs resource_name or base_url' });
        }
      },
    },
    mistral: apiKeySpec,
    'aws-bedrock': {
      shape: {
        region: text('region', 64).regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'region must be an AWS region such as us-east-1'),
        access_key_id: secret('access_key_id').optional(),
        secret_access_key: secret('secret_access_key').optional(),
        session_token: secret('session_token').optional(),
        api_key: secret('api_key').optional(),
        base_url: baseUrl,
      },
      accepted: '{region, access_key_id, secret_access_key, session_token?, base_url?} or {region, api_key, base_url?}',
      check: (credentials, context) => {
        const hasKeyPair = credentials.access_key_id !== undefined || credentials.secret_access_key !== undefined;
        if (credentials.api_key !== undefined) {
          if (hasKeyPair || credentials.session_token !== undefined) {
            context.addIssue({ code: 'custom', path: ['api_key'], message: 'aws-bedrock takes either api_key or access keys, not both' });
          }
          return;
        }
        if (!hasKeyPair) {
          context.addIssue({
            code: 'custom',
            path: ['access_key_id'],
            message: 'aws-bedrock needs access_key_id and secret_access_key (session_token optional), or api_key',
          });
          return;
        }
        for (const field of ['access_key_id', 'secret_access_key'] as const) {
          if (credentials[field] === undefined) {
            context.addIssue({ code: 'custom', path: [field], message: `${field} is required with access keys` });
          }
        }
      },
    },
    groq: apiKeySpec,
  };

  /**
   * The object of each shape. Unknown fields are refused (a misspelt `apiKey` would otherwise vanish,
   * or be stored unmasked), naming the fields the provider takes.
   */
  const enabledSchemas = new Map<ProviderName, z.ZodType>();
  const disabledSchemas = new Map<ProviderName, z.ZodType>();
  for (const [provider, spec] of Object.entries(specs) as [ProviderName, CredentialSpec][]) {
    const object = z.strictObject(spec.shape);
    const check = spec.check;
    enabledSchemas.set(provider, check ? object.superRefine((value, context) => check(value, context)) : object);
    // A disabled entry may be incomplete (even `{}`), but what it holds must still be known fields of the right types.
    disabledSchemas.set(provider, object.partial());
  }

  /** Every field some provider's credentials take: sent beside `credentials` instead of inside, it is refused. */
  const fields: ReadonlySet<string> = new Set(Object.values(specs).flatMap((spec) => Object.keys(spec.shape)));
  return { specs, enabledSchemas, disabledSchemas, fields };
});

/**
 * Validates `credentials` for `provider`: completely when the provider is enabled, known fields
 * and their types only when it is disabled. Fails with a 400 whose details name each field under
 * `credentials.` and whose message says which fields the provider takes.
 */
export function parseCredentials(provider: ProviderName, enabled: boolean, credentials: unknown): Record<string, string> {
  const { specs, enabledSchemas, disabledSchemas } = credentialRules();
  const schema = (enabled ? enabledSchemas : disabledSchemas).get(provider)!;
  const result = schema.safeParse(credentials);
  if (result.success) return result.data as Record<string, string>;
  const accepted = `${provider} credentials are ${specs[provider].accepted}`;
  const details: ErrorDetail[] = result.error.issues.flatMap((issue) => {
    const path = ['credentials', ...issue.path.map(String)].join('.');
    if (issue.code !== 'unrecognized_keys') return [{ path, message: issue.message }];
    // Field names only, never values (they may be secrets); a name is cut short, it is the caller's text.
    return issue.keys.map((key) => ({ path: `${path}.${key.slice(0, 100)}`, message: `unknown field; ${accepted}` }));
  });
  const first = details[0]!;
  const message = first.message.startsWith('unknown field') ? 'unknown field' : first.message;
  throw DomainError.invalid(`invalid ${provider} credentials: ${first.path}: ${message}; ${accepted}`, details);
}

/**
 * Refuses a credential field given beside `credentials` instead of inside it (`{"enabled": true,
 * "base_url": …}`), which would otherwise be dropped without a word.
 */
export function refuseMisplacedCredentials(provider: ProviderName, input: object): void {
  const { specs, fields } = credentialRules();
  const misplaced = Object.keys(input).filter((key) => fields.has(key));
  if (misplaced.length === 0) return;
  const example = `{"enabled": true, "credentials": {${misplaced.map((key) => `"${key}": …`).join(', ')}}}`;
  throw DomainError.invalid(
    `${misplaced.join(', ')} belong${misplaced.length === 1 ? 's' : ''} inside credentials: ${example}; ${provider} credentials are ${specs[provider].accepted}`,
    misplaced.map((key) => ({ path: key, message: `${key} belongs inside credentials` })),
  );
}

/** How a secret is shown: only its last 4 characters, and none of one that short. */
export function maskSecret(value: string): string {
  return value.length > 4 ? `****${value.slice(-4)}` : '****';
}

/** Credentials as answers show them: secret values masked, the rest (URLs, region, …) as stored. */
export function maskCredentials(credentials: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(credentials).map(([field, value]) => [field, SECRET_FIELDS.has(field) ? maskSecret(value) : value]));
}

/** Human-readable summary of what each provider takes, for the OpenAPI document. */
export const CREDENTIALS_DESCRIPTION =
  'Per provider: azure-openai {api_key, resource_name | base_url, api_version?}; ' +
  'aws-bedrock {region, access_key_id, secret_access_key, session_token?} or {region, api_key}; ' +
  'the others {api_key}. Every provider accepts base_url (an http(s) URL) inside credentials. Unknown fields are refused; ' +
  'the rest is checked completely only when enabled is true: a disabled entry may hold {}. Secret values are answered masked (****abcd).';
