#!/usr/bin/env node
import nodeModule from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { nodeSupported, unsupportedNodeMessage } from './node-support.js';

/** Committed size of the young generation (both semi-spaces) at which it stops growing: 16 MB semi-spaces. */
const YOUNG_GENERATION_CAP_BYTES = 32 * 2 ** 20;

/**
 * V8 grows the young generation whenever enough of it survived since it last grew, up to two
 * 64 MB semi-spaces on a 64-bit Node: a pass over a large fleet (its manifests kept, thousands of
 * answers in flight) gets there within seconds, and then half of the process's peak memory is an
 * empty young generation. Once it has grown to 16 MB semi-spaces it grows no further (V8's
 * growth factor, read at each growth, is set to 1): measured on a pass over 1,000 projects,
 * the peak falls by about 100 MB for the same CPU time (docs/development.md). Not done when the
 * process was started with flags of its own for the young generation or the heap's size.
 */
function capYoungGeneration(): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((flag) => /semi[-_]space|max[-_]heap[-_]size|scavenger/.test(flag))) return;
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young === undefined || young.space_size < YOUNG_GENERATION_CAP_BYTES) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}

// Say plainly on an older Node what to do instead of failing inside a dependency.
if (!nodeSupported(process.versions.node)) {
  process.stderr.write(unsupportedNodeMessage(process.versions.node));
  process.exit(1);
}
capYoungGeneration();

/**
 * Keeps V8's compiled code of the command's modules on disk, so that a process after the first
 * (a shard beside others, the next one-shot run, `reconcile status`) spends less of its start
 * compiling them: Node's module compile cache, in `NODE_COMPILE_CACHE` when that is set, else
 * in `node-compile-cache` under the system's temporary directory, a directory of its own per
 * Node version and user. Where it cannot be written the command runs as it would without it,
 * silently; `NODE_DISABLE_COMPILE_CACHE=1` turns it off (docs/commands.md).
 */
nodeModule.enableCompileCache?.();

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
