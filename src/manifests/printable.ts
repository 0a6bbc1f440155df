// Messages quote names and values from the manifests; escaping their control characters keeps
// a hostile file from garbling or colouring a terminal or a log line, and escaping the
// bidirectional controls keeps it from showing a line in another order than it is read.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
