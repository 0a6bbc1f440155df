// HTML with escaping by default: `html\`<td>${value}</td>\`` escapes every interpolated value
// (text and quoted attribute values alike) unless it is itself a fragment made by `html` or
// marked safe with `trusted` (markup written in this source, never data). Arrays are joined;
// undefined, null and false render nothing.

/** A fragment of HTML that is safe to interpolate as it is. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/** The tag: literal parts as written, every value escaped unless it is a SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup written in this source (a style sheet, a script) marked safe: never pass data here. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Fragments joined with a separator (itself literal markup). */
export function joinHtml(parts: readonly SafeHtml[], separator = ''): SafeHtml {
  return new SafeHtml(parts.map((part) => part.text).join(separator));
}
