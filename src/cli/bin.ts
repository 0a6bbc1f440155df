#!/usr/bin/env node
// Supported: the Node LTS lines the dependencies allow, 22 from 22.22 (chokidar's floor) and
// 24 (package.json `engines`). Say so plainly on an older Node instead of failing inside a
// dependency.
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
if (major < 22 || (major === 22 && minor < 22)) {
  process.stderr.write(
    `reconcile: Node ${process.versions.node} is not supported; Node 22.22 or later is required (the LTS lines 22 and 24 are supported).\n`,
  );
  process.exit(1);
}

const { main } = await import('./main.js');
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`reconcile: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
