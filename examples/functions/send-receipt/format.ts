// Formatting of amounts and line items for the receipt mail.

export interface LineItem {
  name: string;
  quantity: number;
  unit_price_cents: number;
}

export function formatAmount(cents: number, currency: string, locale = 'en-GB'): string {
  return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(cents / 100);
}

export function total(items: LineItem[]): number {
  return items.reduce((sum, item) => sum + item.quantity * item.unit_price_cents, 0);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

export function renderItems(items: LineItem[], currency: string): string {
  return items
    .map((item) => `<tr><td>${escapeHtml(item.name)}</td><td>${item.quantity}</td><td>${formatAmount(item.quantity * item.unit_price_cents, currency)}</td></tr>`)
    .join('\n');
}
