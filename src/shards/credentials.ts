// A shard's credentials as the ordinary authentication options: the shard map names where the
// token comes from (a variable, a file, a variable naming a file, or OAuth variables), and the client authenticates exactly as with MANAGEMENT_API_TOKEN,
// --token-file or the MANAGEMENT_API_OAUTH_* variables. Only the shard's own source is in
// the result, so a token of the process environment never leaks into another shard.
import { OAUTH_ENV, type AuthOptionValues } from '../api/auth.js';
import { AuthConfigError } from '../api/auth-errors.js';
import type { Shard } from './shard-map.js';

interface AuthInputs {
  values: AuthOptionValues;
  env: NodeJS.ProcessEnv;
}

export function shardAuthInputs(shard: Shard, env: NodeJS.ProcessEnv, apiUrl: string | undefined): AuthInputs {
  const base: NodeJS.ProcessEnv = apiUrl ? { MANAGEMENT_API_URL: apiUrl } : {};
  const values: AuthOptionValues = apiUrl ? { 'api-url': apiUrl } : {};
  const need = (name: string, field: string): string => {
    const value = env[name];
    if (value === undefined || value.trim() === '') {
      throw new AuthConfigError(`shard ${shard.name}: the environment variable ${name} (credentials.${field} in the shard map) is not set`);
    }
    return value;
  };
  const credentials = shard.credentials;
  if ('tokenEnv' in credentials) return { values, env: { ...base, MANAGEMENT_API_TOKEN: need(credentials.tokenEnv, 'tokenEnv') } };
  if ('tokenFile' in credentials) return { values: { ...values, 'token-file': credentials.tokenFile }, env: base };
  // The path is the environment's (each pod of the chart mounts its own shard's token there).
  if ('tokenFileEnv' in credentials) return { values: { ...values, 'token-file': need(credentials.tokenFileEnv, 'tokenFileEnv') }, env: base };
  const oauth = credentials.oauth;
  return {
    values,
    env: {
      ...base,
      [OAUTH_ENV.clientId]: need(oauth.clientIdEnv, 'oauth.clientIdEnv'),
      [OAUTH_ENV.clientSecret]: need(oauth.clientSecretEnv, 'oauth.clientSecretEnv'),
      ...(oauth.refreshTokenEnv ? { [OAUTH_ENV.refreshToken]: need(oauth.refreshTokenEnv, 'oauth.refreshTokenEnv') } : {}),
      ...(oauth.refreshTokenFile ? { [OAUTH_ENV.refreshTokenFile]: oauth.refreshTokenFile } : {}),
    },
  };
}
