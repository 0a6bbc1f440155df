// The "did you mean" hints: the nearest plausible name, or none.
import { describe, expect, it } from 'vitest';
import { didYouMean, listUnknown } from '../../src/manifests/suggest.js';

describe('suggestions', () => {
  it('offers the nearest name within a few edits, ignoring case and separators, and nothing far', () => {
    expect(didYouMean('Projct', ['Organization', 'Project', 'Secrets'])).toBe('did you mean `Project`?');
    expect(didYouMean('web_app', ['shop', 'web-app'])).toBe('did you mean `web-app`?');
    expect(didYouMean('inventory', ['shop', 'blog', 'web'])).toBeUndefined();
  });

  it('lists unknown names, each with its own hint when there is one', () => {
    expect(listUnknown(['shpo', 'inventory', 'blgo'], ['shop', 'blog', 'web'])).toBe('`shpo` (did you mean `shop`?), `inventory`, `blgo` (did you mean `blog`?)');
    expect(listUnknown(['x'], [])).toBe('`x`');
  });
});
