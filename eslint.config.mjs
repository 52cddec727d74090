// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

/**
 * Packages meet only through their names and public entry points (`@runloom/core`,
 * `@runloom/core/node`, `@runloom/core/testing`): a relative path into another package, or a deep
 * import, would reach internals that the packed package does not ship.
 */
const intoCore = [
  {
    group: ['**/core/src', '**/core/src/**', '**/packages/core/**', '../../core', '../../core/**'],
    message: "import '@runloom/core' (or '/node', '/testing') by name, not core's files.",
  },
  {
    regex: '^@runloom/core/(?!(node|testing)$)',
    message: "only '@runloom/core', '@runloom/core/node' and '@runloom/core/testing' are public.",
  },
];
const intoOtherPackages = [
  {
    group: ['**/server-adapter/src', '**/server-adapter/src/**', '**/packages/server-adapter/**', '**/vscode/src', '**/vscode/src/**', '**/packages/vscode/**'],
    message: 'packages import each other by name, never by relative path.',
  },
];
/** The core depends on no other Runloom package, and imports itself by relative path. */
const fromCore = [...intoOtherPackages, { group: ['@runloom/*'], message: 'the core imports no Runloom package, itself included.' }];

/** What domain code may not import: Node built-ins, adapters, other packages. */
const domainImports = {
  paths: builtinModules.map((name) => ({ name, message: 'domain code must not import Node built-ins; use a port.' })),
  patterns: [
    { group: ['node:*'], message: 'domain code must not import Node built-ins; use a port.' },
    { group: ['**/adapters/**'], message: 'domain code must not import adapters; depend on a port.' },
    ...fromCore,
  ],
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/dist-integration/**', '**/node_modules/**', '.runloom-data/**', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
  {
    // Command launchers are CommonJS scripts that require the built bundle.
    files: ['packages/*/bin/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
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
    files: ['packages/server-adapter/**/*.ts', 'packages/vscode/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...intoCore, ...intoOtherPackages] }] },
  },
  {
    files: ['packages/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: fromCore }] },
  },
  {
    // zod as a namespace import: esbuild binds each `z.object` to zod's function, where `import { z }`
    // makes the bundle define zod's namespace objects at load (~900 getters), in every start.
    files: ['packages/core/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', { selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']", message: "import * as z from 'zod' (or import type * as z)." }],
    },
  },
  {
    // The domain layer runs anywhere: no Node built-ins and no adapters.
    files: ['packages/core/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', domainImports],
      // Waiting goes through the Clock port, so tests can drive time (ARCHITECTURE.md, ports).
      'no-restricted-globals': ['error', ...['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval'].map((name) => ({ name, message: 'wait on the Clock port (clock.setTimeout, clock.sleep, …).' }))],
    },
  },
  {
    // Domain errors know nothing of HTTP (ARCHITECTURE.md, "The error model"): inside the domain
    // only a feature's HTTP face, its `*-routes.ts`, and its `*-module.ts`, which binds the route
    // table, import from `http/`. Services, schemas and records throw `DomainError`.
    files: ['packages/core/src/domain/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*-routes.ts', '**/*-module.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        ...domainImports,
        patterns: [
          ...domainImports.patterns,
          { group: ['**/http', '**/http/**'], message: "only a feature's *-routes.ts (and *-module.ts) import http/; throw a DomainError (domain/errors.ts)." },
        ],
      }],
    },
  },
  {
    // The extension's protocol declares each request in a namespace of its name
    // (`ListThreads.type`), the language server protocol's own idiom that both sides import.
    files: ['packages/vscode/src/common/protocol.ts'],
    rules: { '@typescript-eslint/no-namespace': 'off' },
  },
);
