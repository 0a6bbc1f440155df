import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSecretAuthField } from '../../src/manifests/secret-fields.js';
import { REPO } from './helpers.js';

describe('isSecretAuthField', () => {
  const fields = Object.keys(JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8')).components.schemas.UpdateAuthConfigBody.properties);

  it('picks exactly the secret-bearing fields of UpdateAuthConfigBody', () => {
    const idps = Array.from({ length: 20 }, (_, i) => `external_idp${String(i + 1).padStart(2, '0')}_secret`);
    const expected = [
      'smtp_pass',
      'security_captcha_secret',
      ...idps,
      'hook_mfa_verification_attempt_secrets',
      'hook_password_verification_attempt_secrets',
      'hook_custom_access_token_secrets',
      'hook_send_sms_secrets',
      'hook_send_email_secrets',
      'sms_smsA_access_key',
      'sms_smsB_api_key',
      'sms_smsC_auth_token',
      'sms_smsD_auth_token',
      'sms_smsE_api_key',
      'sms_smsE_api_secret',
    ];
    expect(fields.filter(isSecretAuthField).sort()).toEqual(expected.sort());
  });

  it('leaves look-alikes alone', () => {
    for (const field of ['external_idp01_client_id', 'hook_send_sms_uri', 'smtp_user', 'sms_smsC_account_sid', 'security_captcha_provider', 'refresh_token_rotation_enabled']) {
      expect(isSecretAuthField(field), field).toBe(false);
    }
  });
});
