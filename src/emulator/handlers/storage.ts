import { applyStorageUpdate } from '../section-updates.js';
import { ok, projectFor, type Handler } from './context.js';

export const getStorageConfig: Handler = (context) => ok(structuredClone(projectFor(context, { service: 'storage' }).storage));

export const updateStorageConfig: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'storage' });
  applyStorageUpdate(project, context.body as Record<string, unknown>);
  return ok({});
};

export const listBuckets: Handler = (context) => {
  const project = projectFor(context, { service: 'storage' });
  return ok(
    project.buckets.map((b) => ({ id: b.id, name: b.name, owner: b.owner, created_at: b.createdAt, updated_at: b.updatedAt, public: b.public })),
  );
};
