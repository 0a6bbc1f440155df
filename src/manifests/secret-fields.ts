// Which auth configuration fields carry secrets. The service masks them in responses (HMAC
// keyed by the project ref) and a manifest must give them as references, never literals.
const SECRET_AUTH_FIELD_PATTERNS: readonly RegExp[] = [
  /^smtp_pass$/,
  /^security_captcha_secret$/,
  /^external_[a-z0-9]+_secret$/,
  /^hook_[a-z0-9_]+_secrets$/,
  /^sms_sms[A-E]_(access_key|api_key|auth_token|api_secret)$/,
];

/** The answers so far, by field name: a plan asks for every auth field of every project. */
const answered = new Map<string, boolean>();
/** Past this many names (the API has a few hundred auth fields), names are no longer remembered. */
const REMEMBERED_NAMES = 4096;

/** True for an auth configuration field (UpdateAuthConfigBody) that holds a secret. */
export function isSecretAuthField(field: string): boolean {
  let secret = answered.get(field);
  if (secret === undefined) {
    secret = SECRET_AUTH_FIELD_PATTERNS.some((pattern) => pattern.test(field));
    if (answered.size < REMEMBERED_NAMES) answered.set(field, secret);
  }
  return secret;
}
