/**
 * isomorphic-git, imported on the first git operation. esbuild.mjs bundles this module on its own
 * (`isomorphic-git.js` beside each bundle holding the core) and keeps the core's imports of it
 * external, so a server that never touches a repository never parses it. Import it through
 * `importIsomorphicGit` (`isomorphic-git-client.ts`), never statically (types are fine).
 */
export * as git from 'isomorphic-git';
