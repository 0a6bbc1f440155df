// Checks the signature header of a payment event: `t=<unix seconds>,v1=<hex HMAC-SHA256>`
// over `<t>.<body>`, keyed by the shared signing secret. Events older than the tolerance are
// refused so a captured request cannot be replayed later.

const encoder = new TextEncoder();

export interface SignatureCheck {
  valid: boolean;
  reason?: string;
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp = Number.NaN;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 't') timestamp = Number(value);
    else if (key === 'v1' && value) signatures.push(value);
  }
  return Number.isFinite(timestamp) && signatures.length > 0 ? { timestamp, signatures } : undefined;
}

function toHex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Constant-time comparison of two hex strings of equal length. */
function equalHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

export async function verifySignature(
  body: string,
  header: string | null,
  secret: string,
  now: number = Date.now(),
  toleranceSeconds = 300,
): Promise<SignatureCheck> {
  if (!header) return { valid: false, reason: 'missing signature header' };
  const parsed = parseHeader(header);
  if (!parsed) return { valid: false, reason: 'malformed signature header' };
  if (Math.abs(now / 1000 - parsed.timestamp) > toleranceSeconds) return { valid: false, reason: 'event too old' };
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = toHex(await crypto.subtle.sign('HMAC', key, encoder.encode(`${parsed.timestamp}.${body}`)));
  return parsed.signatures.some((signature) => equalHex(signature, expected)) ? { valid: true } : { valid: false, reason: 'signature mismatch' };
}
