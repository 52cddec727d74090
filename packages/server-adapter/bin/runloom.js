#!/usr/bin/env node
// The `runloom` command. The CLI itself is the bundle dist/cli.js, which `npm run build` writes
// (`npm install` in a clone runs it through the root's `prepare`); this file exists before it
// does, so npm can link the command at install time.
'use strict';
const path = require('node:path');
const cli = path.join(__dirname, '..', 'dist', 'cli.js');
try {
  require.resolve(cli);
} catch {
  process.stderr.write(`runloom: ${cli} is not built yet; run 'npm run build' in the repository root.\n`);
  process.exit(1);
}
require(cli);
