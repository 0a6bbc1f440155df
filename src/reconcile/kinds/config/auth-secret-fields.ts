// The rule of api-facts.md ("Secrets and masked values"): which auth fields the service
// masks as HMAC digests. Mirrors `SecretAuthField` in src/manifests/types.ts.
const EXACT = new Set([
  'smtp_pass',
  'security_captcha_secret',
  'sms_smsA_access_key',
  'sms_smsB_api_key',
  'sms_smsC_auth_token',
  'sms_smsD_auth_token',
  'sms_smsE_api_key',
  'sms_smsE_api_secret',
]);

export function isSecretAuthField(field: string): boolean {
  return EXACT.has(field) || /^hook_[a-z0-9_]+_secrets$/.test(field) || /^external_[a-z0-9]+_secret$/.test(field);
}
