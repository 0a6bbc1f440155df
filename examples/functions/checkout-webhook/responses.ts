// Small JSON response helpers shared by the shop's functions (mapped as `@shop/responses`).

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}

export function problem(status: number, message: string): Response {
  return json({ error: message }, status);
}
