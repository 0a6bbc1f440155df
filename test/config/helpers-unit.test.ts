import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalCidr, cidrSet, sameCidrSet } from '../../src/reconcile/kinds/config/cidr-set.js';
import { authSecretDigest, matchesAuthSecretDigest } from '../../src/reconcile/kinds/config/hmac-digest.js';
import { isSecretAuthField } from '../../src/manifests/secret-fields.js';
import { replicaRegion } from '../../src/reconcile/kinds/config/read-replicas.js';
import { leaves } from '../../src/reconcile/kinds/config/storage.js';
import { majorVersion } from '../../src/reconcile/kinds/config/postgres-version.js';

describe('authSecretDigest', () => {
  it('is the lowercase hex HMAC-SHA256 of the value keyed by the project ref', () => {
    const expected = createHmac('sha256', 'abcdefghijklmnopqrst').update('s3cret').digest('hex');
    expect(authSecretDigest('s3cret', 'abcdefghijklmnopqrst')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches only the same value under the same ref', () => {
    const digest = authSecretDigest('value-1', 'ref-a');
    expect(matchesAuthSecretDigest(digest, 'value-1', 'ref-a')).toBe(true);
    expect(matchesAuthSecretDigest(digest.toUpperCase(), 'value-1', 'ref-a')).toBe(true);
    expect(matchesAuthSecretDigest(digest, 'value-2', 'ref-a')).toBe(false);
    expect(matchesAuthSecretDigest(digest, 'value-1', 'ref-b')).toBe(false);
    expect(matchesAuthSecretDigest(null, 'value-1', 'ref-a')).toBe(false);
    expect(matchesAuthSecretDigest('', 'value-1', 'ref-a')).toBe(false);
  });
});

describe('isSecretAuthField', () => {
  it('names the masked auth fields of the API facts', () => {
    for (const field of ['smtp_pass', 'security_captcha_secret', 'sms_smsA_access_key', 'sms_smsB_api_key', 'sms_smsC_auth_token', 'sms_smsD_auth_token', 'sms_smsE_api_key', 'sms_smsE_api_secret', 'hook_send_email_secrets', 'hook_custom_access_token_secrets', 'external_idp01_secret', 'external_idp20_secret']) {
      expect(isSecretAuthField(field), field).toBe(true);
    }
  });
  it('leaves ordinary fields alone', () => {
    for (const field of ['site_url', 'smtp_user', 'smtp_host', 'external_idp01_client_id', 'external_idp01_enabled', 'hook_send_email_uri', 'hook_send_email_enabled', 'sms_smsE_from', 'security_captcha_provider']) {
      expect(isSecretAuthField(field), field).toBe(false);
    }
  });
});

describe('cidr sets', () => {
  it('ignore order, duplicates and the implicit host prefix', () => {
    expect(sameCidrSet(['10.0.0.0/8', '192.168.1.1'], ['192.168.1.1/32', '10.0.0.0/8', '10.0.0.0/8'])).toBe(true);
    expect(sameCidrSet(['2001:DB8:0:0:0:0:0:1/128'], ['2001:db8::1'])).toBe(true);
    expect(sameCidrSet([], undefined)).toBe(true);
  });
  it('see a real difference', () => {
    expect(sameCidrSet(['10.0.0.0/8'], ['10.0.0.0/16'])).toBe(false);
    expect(sameCidrSet(['10.0.0.0/8'], ['10.0.0.0/8', '11.0.0.0/8'])).toBe(false);
    expect(sameCidrSet(['::/0'], [])).toBe(false);
  });
  it('canonicalises IPv6 the RFC 5952 way', () => {
    expect(canonicalCidr('2001:0db8:0000:0000:0000:ff00:0042:8329/64')).toBe('2001:db8::ff00:42:8329/64');
    expect(canonicalCidr('::ffff:1.2.3.4')).toBe('::ffff:102:304/128');
    expect(canonicalCidr('0:0:0:0:0:0:0:0/0')).toBe('::/0');
  });
  it('is order-insensitive for any list (property)', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255), fc.integer({ min: 0, max: 32 })).map(([a, b, c, d, p]) => `${a}.${b}.${c}.${d}/${p}`);
    fc.assert(
      fc.property(fc.array(ipv4, { maxLength: 8 }), fc.nat(), (list, seed) => {
        const shuffled = [...list].sort(() => (seed % 3) - 1);
        expect(sameCidrSet(list, shuffled)).toBe(true);
        expect(cidrSet([...list, ...list])).toEqual(cidrSet(list));
      }),
    );
  });
});

describe('replicaRegion', () => {
  it('reads the region from the identifier, else the host', () => {
    expect(replicaRegion({ identifier: 'abcd-rr-eu-west-2-x1', db_host: 'db.example' })).toBe('eu-west-2');
    expect(replicaRegion({ identifier: 'abcd-rr-1', db_host: 'aws-0-ap-southeast-2.pooler.example' })).toBe('ap-southeast-2');
    expect(replicaRegion({ identifier: 'abcd', db_host: 'db.example' })).toBeUndefined();
  });
});

describe('storage leaves', () => {
  it('flattens nested features to dotted leaves', () => {
    expect(leaves({ fileSizeLimit: 10, features: { s3Protocol: { enabled: true }, imageTransformation: { enabled: false } } })).toEqual({
      fileSizeLimit: 10,
      'features.s3Protocol.enabled': true,
      'features.imageTransformation.enabled': false,
    });
  });
});

describe('majorVersion', () => {
  it('reads the major of every spelling the service uses', () => {
    expect(majorVersion('15.1.0.117')).toBe(15);
    expect(majorVersion('17-oriole')).toBe(17);
    expect(majorVersion('17')).toBe(17);
    expect(majorVersion(15)).toBe(15);
    expect(majorVersion('beta')).toBeUndefined();
    expect(majorVersion(undefined)).toBeUndefined();
  });
});
