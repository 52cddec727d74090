// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.runloom-data/**', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An un-awaited promise in a server is a lost error.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The domain layer runs anywhere: no Node built-ins and no adapters.
    files: ['packages/core/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: builtinModules.map((name) => ({ name, message: 'domain code must not import Node built-ins; use a port.' })),
        patterns: [
          { group: ['node:*'], message: 'domain code must not import Node built-ins; use a port.' },
          { group: ['**/adapters/**'], message: 'domain code must not import adapters; depend on a port.' },
        ],
      }],
      // Waiting goes through the Clock port, so tests can drive time (ARCHITECTURE.md, ports).
      'no-restricted-globals': ['error', ...['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval'].map((name) => ({ name, message: 'wait on the Clock port (clock.setTimeout, clock.sleep, …).' }))],
    },
  },
);
