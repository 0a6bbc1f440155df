import { ok, projectFor, type Handler } from './context.js';

export const listApiKeys: Handler = (context) => {
  const project = projectFor(context);
  const reveal = context.query.reveal === true;
  return ok(
    project.apiKeys.map((key) => ({
      // Secret keys are shown in full only when asked for with reveal=true.
      api_key: key.type === 'secret' && !reveal ? `${key.prefix ?? ''}${'•'.repeat(16)}` : key.apiKey,
      id: key.type === 'legacy' ? key.name : key.id,
      type: key.type,
      prefix: key.prefix ?? null,
      name: key.name,
      description: key.description ?? null,
      hash: key.hash ?? null,
      secret_jwt_template: key.secretJwtTemplate ?? null,
      inserted_at: key.type === 'legacy' ? null : key.insertedAt,
      updated_at: key.type === 'legacy' ? null : key.updatedAt,
    })),
  );
};
