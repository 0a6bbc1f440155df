/** The command line asks for something the command cannot do: main.ts prints the message and the usage, and exits 1. */
export class UsageError extends Error {}
