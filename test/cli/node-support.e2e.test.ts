// Which Node runs the command, and what an unsupported one says: the versions that work and
// the dev dependency that brings one.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeSupported, unsupportedNodeMessage } from '../../src/cli/node-support.js';
import { BIN } from '../e2e/helpers/cli.js';

describe('supported Node versions', () => {
  it('22.22 and later on the 22 line, and 24 and later', () => {
    for (const version of ['22.22.0', '22.23.1', '24.0.0', '24.21.0', '26.1.0']) expect(nodeSupported(version), version).toBe(true);
    for (const version of ['20.20.2', '22.21.9', '18.0.0', '21.7.3']) expect(nodeSupported(version), version).toBe(false);
  });

  it('an unsupported Node is told which versions work and the dev dependency that brings Node 24', () => {
    const message = unsupportedNodeMessage('20.20.2');
    expect(message).toContain('Node 20.20.2 is not supported; Node 22.22 or later is required (the LTS lines 22 and 24 are supported).');
    expect(message).toContain('npm install --save-dev node@24');
  });

  // The machine's own `node` (outside node_modules), when it is older than 22.22, runs the built command.
  const machineNode = (process.env.PATH ?? '').split(':').filter((dir) => dir && !dir.includes('node_modules')).map((dir) => join(dir, 'node')).find((path) => existsSync(path));
  const version = machineNode ? spawnSync(machineNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';
  it.skipIf(!machineNode || nodeSupported(version))(`the built command on the machine's Node ${version || '(none)'} exits 1 with that message`, () => {
    const run = spawnSync(machineNode!, [BIN, '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(unsupportedNodeMessage(version));
  });
});
