/**
 * The providers an account has enabled: the last resort when deriving `llms[].provider`
 * (docs/api.md#configurations). The runnables module binds it to the providers feature when that is loaded, else
 * to a list that is always empty; a module loaded earlier may bind its own.
 */
export const EnabledProviders = Symbol.for('runloom.EnabledProviders');
export interface EnabledProviders {
  /** Names of the account's enabled providers. */
  list(accountId: string): Promise<string[]>;
}

export const noEnabledProviders: EnabledProviders = {
  list: async () => [],
};
