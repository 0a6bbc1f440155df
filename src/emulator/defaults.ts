import { componentSchema } from './openapi.js';
import { randomHex } from './random.js';

/** The domain under which the emulator's projects live (database hosts, API URLs, vanity subdomains). */
export const PLATFORM_DOMAIN = 'platform.test';

/** A new project's auth settings, as the service starts them; every other field is null (unset). */
const AUTH_DEFAULTS: Record<string, unknown> = {
  site_url: 'http://localhost:3000',
  uri_allow_list: '',
  disable_signup: false,
  jwt_exp: 3600,
  api_max_request_duration: 10,
  db_max_pool_size: null,
  external_email_enabled: true,
  external_phone_enabled: false,
  external_anonymous_users_enabled: false,
  mailer_autoconfirm: false,
  mailer_allow_unverified_email_sign_ins: false,
  mailer_secure_email_change_enabled: true,
  mailer_otp_exp: 3600,
  mailer_otp_length: 6,
  mailer_subjects_confirmation: 'Confirm Your Signup',
  mailer_subjects_email_change: 'Confirm Email Change',
  mailer_subjects_invite: 'You have been invited',
  mailer_subjects_magic_link: 'Your Magic Link',
  mailer_subjects_reauthentication: 'Confirm reauthentication',
  mailer_subjects_recovery: 'Reset Your Password',
  mailer_templates_confirmation_content: '<h2>Confirm your signup</h2>\n<p><a href="{{ .ConfirmationURL }}">Confirm your mail</a></p>',
  mailer_templates_email_change_content: '<h2>Confirm Change of Email</h2>\n<p><a href="{{ .ConfirmationURL }}">Change Email</a></p>',
  mailer_templates_invite_content: '<h2>You have been invited</h2>\n<p><a href="{{ .ConfirmationURL }}">Accept the invite</a></p>',
  mailer_templates_magic_link_content: '<h2>Magic Link</h2>\n<p><a href="{{ .ConfirmationURL }}">Log In</a></p>',
  mailer_templates_reauthentication_content: '<h2>Confirm reauthentication</h2>\n<p>Enter the code: {{ .Token }}</p>',
  mailer_templates_recovery_content: '<h2>Reset Password</h2>\n<p><a href="{{ .ConfirmationURL }}">Reset Password</a></p>',
  mfa_max_enrolled_factors: 10,
  mfa_totp_enroll_enabled: true,
  mfa_totp_verify_enabled: true,
  mfa_phone_enroll_enabled: false,
  mfa_phone_verify_enabled: false,
  mfa_web_authn_enroll_enabled: false,
  mfa_web_authn_verify_enabled: false,
  mfa_phone_otp_length: 6,
  mfa_phone_template: 'Your code is {{ .Code }}',
  mfa_phone_max_frequency: 5,
  password_hibp_enabled: false,
  password_min_length: 6,
  password_required_characters: '',
  rate_limit_anonymous_users: 30,
  rate_limit_email_sent: 2,
  rate_limit_sms_sent: 30,
  rate_limit_token_refresh: 150,
  rate_limit_verify: 30,
  rate_limit_otp: 30,
  refresh_token_rotation_enabled: true,
  saml_enabled: false,
  saml_allow_encrypted_assertions: false,
  security_captcha_enabled: false,
  security_manual_linking_enabled: false,
  security_refresh_token_reuse_interval: 10,
  security_update_password_require_reauthentication: false,
  sessions_single_per_user: false,
  sms_autoconfirm: false,
  sms_max_frequency: 60,
  sms_otp_exp: 60,
  sms_otp_length: 6,
  sms_template: 'Your code is {{ .Code }}',
  smtp_max_frequency: 60,
};

let authTemplate: Record<string, unknown> | undefined;

export function defaultAuthConfig(): Record<string, unknown> {
  authTemplate ??= buildAuthDefaults();
  return { ...authTemplate };
}

function buildAuthDefaults(): Record<string, unknown> {
  const schema = componentSchema('AuthConfigResponse') as { properties: Record<string, { type?: string; nullable?: boolean }> };
  const out: Record<string, unknown> = {};
  for (const [field, property] of Object.entries(schema.properties)) {
    if (field in AUTH_DEFAULTS) out[field] = AUTH_DEFAULTS[field];
    else if (property.nullable) out[field] = /_enabled$/.test(field) && property.type === 'boolean' ? false : null;
    else out[field] = property.type === 'boolean' ? false : property.type === 'integer' || property.type === 'number' ? 0 : '';
  }
  return out;
}

export function defaultStorageConfig(): Record<string, unknown> {
  return {
    fileSizeLimit: 52_428_800,
    features: {
      imageTransformation: { enabled: false },
      s3Protocol: { enabled: true },
      icebergCatalog: { enabled: false, maxNamespaces: 10, maxTables: 10, maxCatalogs: 2 },
      vectorBuckets: { enabled: false, maxBuckets: 10, maxIndexes: 5 },
    },
    capabilities: { list_v2: true, iceberg_catalog: false },
    external: { upstreamTarget: 'main' },
    migrationVersion: 'fix-object-level',
    databasePoolMode: 'recycled',
  };
}

export function newJwtSecret(): string {
  return randomHex(32);
}

/** Postgres builds known per engine: the version a new project starts on and the one an upgrade reaches. */
export const POSTGRES_BUILDS: Record<string, string> = {
  '13': '13.3.0.2',
  '14': '14.1.0.89',
  '15': '15.8.1.085',
  '17': '17.4.1.054',
  '17-oriole': '17.0.1.084-orioledb',
};
