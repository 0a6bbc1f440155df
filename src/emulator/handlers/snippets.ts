import { badRequest, notFound } from '../errors.js';
import type { SnippetRecord } from '../state.js';
import { ok, requireUser, type Handler, type HandlerContext } from './context.js';

function userNumber(context: HandlerContext, userId: string): number {
  return [...context.state.users.keys()].indexOf(userId) + 1;
}

function visible(context: HandlerContext, snippet: SnippetRecord): boolean {
  const user = requireUser(context);
  const project = context.state.projects.get(snippet.projectRef);
  if (!project) return false;
  const org = context.state.organizations.get(project.orgSlug);
  if (!org || !context.state.memberRole(org, user.id)) return false;
  return snippet.visibility !== 'user' || snippet.ownerId === user.id;
}

function summary(context: HandlerContext, snippet: SnippetRecord): Record<string, unknown> {
  const project = context.state.projects.get(snippet.projectRef)!;
  const owner = context.state.users.get(snippet.ownerId);
  const person = { id: userNumber(context, snippet.ownerId), username: owner?.name ?? snippet.ownerId };
  return {
    id: snippet.id, inserted_at: snippet.insertedAt, updated_at: snippet.updatedAt, type: 'sql', visibility: snippet.visibility,
    name: snippet.name, description: snippet.description, project: { id: project.numericId, name: project.name },
    owner: person, updated_by: person, favorite: snippet.favorite,
  };
}

export const listSnippets: Handler = (context) => {
  const projectRef = context.query.project_ref as string | undefined;
  const sortBy = (context.query.sort_by as string | undefined) ?? 'inserted_at';
  const order = (context.query.sort_order as string | undefined) ?? 'desc';
  const limitText = context.query.limit as string | undefined;
  const limit = limitText === undefined ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('`limit` must be an integer between 1 and 100');
  let offset = 0;
  const cursor = context.query.cursor as string | undefined;
  if (cursor !== undefined) {
    offset = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Number.isInteger(offset) || offset < 0) throw badRequest('`cursor` is not a cursor this endpoint returned');
  }
  const all = [...context.state.snippets.values()]
    .filter((s) => visible(context, s) && (projectRef === undefined || s.projectRef === projectRef))
    .sort((a, b) => {
      const key = sortBy === 'name' ? a.name.localeCompare(b.name) : a.insertedAt.localeCompare(b.insertedAt) || a.id.localeCompare(b.id);
      return order === 'asc' ? key : -key;
    });
  const page = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? Buffer.from(String(offset + limit), 'utf8').toString('base64url') : undefined;
  return ok({ data: page.map((s) => summary(context, s)), ...(next ? { cursor: next } : {}) });
};

export const getSnippet: Handler = (context) => {
  const snippet = context.state.snippets.get(context.params.id!);
  if (!snippet || !visible(context, snippet)) throw notFound(`Snippet ${context.params.id} not found`);
  return ok({ ...summary(context, snippet), content: { favorite: snippet.favorite, schema_version: '1.0', sql: snippet.sql } });
};
