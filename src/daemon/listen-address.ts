// `--metrics-addr`: parsed where the settings are, without the HTTP server's modules.
export interface ListenAddress {
  host: string;
  port: number;
}

export class InvalidAddressError extends Error {
  constructor(readonly text: string) {
    super(`Expected --metrics-addr as HOST:PORT such as \`0.0.0.0:9464\` or \`[::1]:9464\` (port 0 to 65535), got \`${text}\``);
    this.name = 'InvalidAddressError';
  }
}

/** Parses `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (all interfaces). */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!match) throw new InvalidAddressError(text);
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidAddressError(text);
  const host = match[1] ?? (match[2] || '0.0.0.0');
  return { host, port };
}
