// Remembers, per loaded document, how to find a field's line and column in its file, so checks
// made after loading (secret references before a plan) still give located errors.
import type { AnyDocument } from './types.js';
import type { Position } from './yaml-source.js';

type Locator = (pointer: string, options?: { key?: boolean }) => Position;

const locators = new WeakMap<object, Locator>();

export function registerLocator(document: AnyDocument, locator: Locator): void {
  locators.set(document, locator);
}

/** Line and column of a field (JSON pointer from the document root) of a loaded document. */
export function locateField(document: AnyDocument, pointer: string, options?: { key?: boolean }): Position {
  const locator = locators.get(document);
  return locator ? locator(pointer, options) : { line: document.source.line, column: document.source.column };
}
