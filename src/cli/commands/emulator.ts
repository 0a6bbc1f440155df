import type { CommandContext } from '../context.js';

export async function run(context: CommandContext): Promise<number> {
  context.stderr.write('reconcile: the emulator command is being built\n');
  return 1;
}
