// Which Node versions run the command, and what an unsupported one is told. Kept free of
// imports so bin.ts can check before anything a newer Node needs is loaded.

/** The LTS lines the dependencies allow: 22 from 22.22 (chokidar's floor) and 24 (package.json `engines`). */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 22);
}

/**
 * The message for an unsupported Node, with the way forward that needs no change to the
 * machine: the registry's `node` package as a dev dependency puts Node 24 in
 * node_modules/.bin, which npx and npm scripts use first.
 */
export function unsupportedNodeMessage(version: string): string {
  return (
    `reconcile: Node ${version} is not supported; Node 22.22 or later is required (the LTS lines 22 and 24 are supported).\n` +
    'reconcile: to run it with npx in this project, add Node 24 as a dev dependency: npm install --save-dev node@24 (or install Node 24, or 22.22 or later, on the machine).\n' +
    `reconcile: npm's EBADENGINE warnings on Node ${version} say the same; they stop once npm itself runs on Node 22.22 or later.\n`
  );
}
