/** The command line asks for something the command cannot do: main.ts prints the message and a pointer to `--help`, and exits 1. */
export class UsageError extends Error {}
