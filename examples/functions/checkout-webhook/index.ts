// Entry point: receives payment events, verifies their signature, and records paid orders.
import { json, problem } from '@shop/responses';
import { verifySignature } from './verify.ts';

interface PaymentEvent {
  id: string;
  type: string;
  data: { order_id: string; amount_cents: number; currency: string };
}

const HANDLED = new Set(['payment.succeeded', 'payment.refunded']);

async function handle(request: Request): Promise<Response> {
  if (request.method !== 'POST') return problem(405, 'method not allowed');
  const secret = process.env.PAYMENT_WEBHOOK_SIGNING_SECRET;
  if (!secret) return problem(500, 'signing secret not configured');

  const body = await request.text();
  const check = await verifySignature(body, request.headers.get('x-payment-signature'), secret);
  if (!check.valid) return problem(400, `invalid signature: ${check.reason}`);

  let event: PaymentEvent;
  try {
    event = JSON.parse(body) as PaymentEvent;
  } catch {
    return problem(400, 'body is not JSON');
  }
  if (!HANDLED.has(event.type)) return json({ received: true, ignored: event.type });

  const status = event.type === 'payment.succeeded' ? 'paid' : 'refunded';
  const response = await fetch(`${process.env.SHOP_API_URL}/rest/v1/orders?id=eq.${encodeURIComponent(event.data.order_id)}`, {
    method: 'PATCH',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${process.env.SHOP_SERVICE_TOKEN}`,
      prefer: 'return=minimal',
    },
    body: JSON.stringify({ status, paid_amount_cents: event.data.amount_cents, currency: event.data.currency }),
  });
  if (!response.ok) return problem(502, `order update failed with ${response.status}`);
  return json({ received: true, order: event.data.order_id, status });
}

export default { fetch: handle };
