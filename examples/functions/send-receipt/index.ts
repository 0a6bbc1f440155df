// Entry point: sends the receipt of an order to the signed-in customer who placed it.
import { formatAmount, renderItems, total, type LineItem } from '@shop/format';

interface ReceiptRequest {
  order_id: string;
  email: string;
  currency: string;
  items: LineItem[];
}

const template = await readTemplate(new URL('./templates/receipt.html', import.meta.url));

async function readTemplate(url: URL): Promise<string> {
  const response = await fetch(url);
  return response.text();
}

function isReceiptRequest(value: unknown): value is ReceiptRequest {
  const body = value as Partial<ReceiptRequest>;
  return typeof body?.order_id === 'string' && typeof body.email === 'string' && typeof body.currency === 'string' && Array.isArray(body.items);
}

async function handle(request: Request): Promise<Response> {
  if (request.method !== 'POST') return new Response('method not allowed', { status: 405 });
  const body: unknown = await request.json().catch(() => undefined);
  if (!isReceiptRequest(body)) return new Response('expected {order_id, email, currency, items}', { status: 400 });

  const html = template
    .replace('{{order_id}}', body.order_id)
    .replace('{{items}}', renderItems(body.items, body.currency))
    .replace('{{total}}', formatAmount(total(body.items), body.currency));

  const sent = await fetch('https://mail-api.acme-commerce.example/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.RECEIPT_MAIL_API_KEY}` },
    body: JSON.stringify({ from: process.env.RECEIPT_SENDER_ADDRESS, to: body.email, subject: `Your receipt for order ${body.order_id}`, html }),
  });
  if (!sent.ok) return new Response(`mail service answered ${sent.status}`, { status: 502 });
  return new Response(JSON.stringify({ sent: true }), { headers: { 'content-type': 'application/json' } });
}

export default { fetch: handle };
