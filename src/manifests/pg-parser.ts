// Postgres's own parser (libpg-query: the parser compiled to WebAssembly), loaded once per
// process, on first use, for the migration files of a checkout and the emulator's SQL.
//
// Its module is instantiated with V8's dynamic tier-up of WebAssembly turned off: V8 otherwise
// recompiles the parser's hot functions with its optimising compiler in the background, and for
// the grammar's one huge function (reached by a statement with a CHECK constraint, say) that
// compilation alone takes about 540 MB for a moment: a process that loads a checkout whose
// migrations hold one peaked at about 600 MB, over the chart's 512 MiB limit of the reconciler's
// container. The baseline compiler's code parses a migration file in well under a millisecond
// more. V8 reads the budget when it instantiates a module, so the budget is set for this module
// alone and put back right after (other WebAssembly of the process, the emulator's Postgres,
// tiers up as usual).
import { setFlagsFromString } from 'node:v8';

export type PostgresParser = typeof import('libpg-query');

/** A budget no function of the parser ever spends: it is never recompiled by the optimising compiler. */
const NO_TIER_UP = 2_147_483_647;
/** V8's own budget (`node --v8-options`), or the one this process was started with. */
function givenBudget(): string {
  const flag = [...process.execArgv].reverse().find((arg) => arg.startsWith('--wasm-tiering-budget=') || arg.startsWith('--wasm_tiering_budget='));
  return flag?.split('=')[1] ?? '13000000';
}

let loaded: Promise<PostgresParser> | undefined;

/** libpg-query, loaded and instantiated once, without dynamic tier-up. */
export function postgresParser(): Promise<PostgresParser> {
  loaded ??= (async () => {
    setFlagsFromString(`--wasm-tiering-budget=${NO_TIER_UP}`);
    try {
      const parser = await import('libpg-query');
      await parser.loadModule();
      return parser;
    } finally {
      setFlagsFromString(`--wasm-tiering-budget=${givenBudget()}`);
    }
  })();
  return loaded;
}
