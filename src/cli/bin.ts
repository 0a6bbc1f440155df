#!/usr/bin/env node
// Node 24 is the supported runtime (the project installs it as a devDependency and the
// image uses it). Say so plainly on an older one instead of failing inside a dependency.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(
    `reconcile: Node ${process.versions.node} is too old; Node 24 is required. ` +
      'Run it through npm (npx reconcile ...), which uses the Node 24 from node_modules/.bin.\n',
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
