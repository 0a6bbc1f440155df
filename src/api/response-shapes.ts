import { RESPONSE_SHAPES } from './operation-facts.js';

/**
 * True when `value` has the top-level JSON type the spec documents for the operation's success
 * answers (or none is documented). Only operations whose every JSON success answer has one
 * top-level type are listed, so the check at the boundary never refuses an answer the spec allows.
 */
export function hasDocumentedShape(operationId: string, value: unknown): boolean {
  const shape = RESPONSE_SHAPES.get(operationId);
  if (shape === 'array') return Array.isArray(value);
  if (shape === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  return true;
}
