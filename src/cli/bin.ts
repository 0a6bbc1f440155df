#!/usr/bin/env node
// Say plainly on an older Node what to do instead of failing inside a dependency.
import { nodeSupported, unsupportedNodeMessage } from './node-support.js';

if (!nodeSupported(process.versions.node)) {
  process.stderr.write(unsupportedNodeMessage(process.versions.node));
  process.exit(1);
}

const { main } = await import('./main.js');
main(process.argv.slice(2), { stdin: process.stdin }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`reconcile: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
