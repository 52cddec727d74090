import type { Migration } from '../../ports/database';

/** Service-account clients, keyed by client id; `secret_hash` is a `PasswordHasher` string. */
export const CLIENTS = 'clients';
/** JWT signing keys, keyed by `kid`; the private half is sealed with the `SecretBox`. */
export const SIGNING_KEYS = 'signing_keys';

export const authMigrations: Migration[] = [
  {
    id: 'auth/001-create-clients-and-signing-keys',
    steps: [
      { createCollection: CLIENTS, fields: { account_id: 'text' } },
      { createCollection: SIGNING_KEYS, fields: { created_at: 'text', retired_at: 'text' } },
    ],
  },
];
