// Credential files the command line and environment name (the token file, the OAuth refresh
// token file) must not resolve inside the manifests tree: the tree is read and deployed (a
// function's files), and the rotated refresh token is written to its file.
import { resolve } from 'node:path';
import { OAUTH_ENV } from '../api/auth.js';
import { credentialInsideTree } from '../util/manifests-tree.js';
import type { Settings } from './settings.js';

/** Each configured credential file inside the tree at `root`, as a sentence naming its option or variable. */
export function credentialPathProblems(context: { settings: Partial<Pick<Settings, 'tokenFile' | 'tokenFileFlag'>>; env: NodeJS.ProcessEnv; cwd: string }, root: string, extra: ReadonlyArray<[string, string | undefined]> = []): string[] {
  const tokenFile = context.settings.tokenFile;
  const named: Array<[string, string | undefined]> = [
    [context.settings.tokenFileFlag ? '--token-file' : 'MANAGEMENT_API_TOKEN_FILE', tokenFile ?? context.env.MANAGEMENT_API_TOKEN_FILE],
    [OAUTH_ENV.refreshTokenFile, context.env[OAUTH_ENV.refreshTokenFile]],
    ...extra,
  ];
  const problems: string[] = [];
  for (const [label, file] of named) {
    if (file === undefined || file.trim() === '') continue;
    const reason = credentialInsideTree(root, resolve(context.cwd, file.trim()));
    if (reason !== undefined) problems.push(`${label} ${reason}`);
  }
  return problems;
}
