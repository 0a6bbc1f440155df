// The cheap answer to "is this path in the checkout, and where" (`below`) agrees with
// `path.relative` wherever it answers, and `insideOf` with the rule it stands for, over
// arbitrary paths: `.` and `..` segments, doubled and trailing separators, roots that are
// prefixes of a sibling's name, roots that are not absolute (an empty one is a prefix of every path).
import fc from 'fast-check';
import { isAbsolute, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { below, insideOf } from '../../src/manifests/checkout-files.js';

const segment = fc.constantFrom('a', 'b', 'ab', 'a.b', '.', '..', '', '...', '.a');
const path = fc.array(segment, { minLength: 0, maxLength: 6 }).map((parts) => `/${parts.join('/')}`);
const root = fc.constantFrom('/', '/a', '/a/b', '/ab', '/a/', '/a//', '/a/.', '/a/./b', '/a/../b', '', '.', 'a', './a');

describe('checkout paths', () => {
  it('below answers only what path.relative answers, and always for a normalized path under a normalized root', () => {
    fc.assert(
      fc.property(root, path, (r, target) => {
        const fast = below(r, target);
        const slow = relative(r, target);
        if (fast !== undefined) expect(fast).toBe(slow);
        const normalized = (p: string) => !/\/\/|\/\.\.?(?:\/|$)/.test(p) && (p === '/' || !p.endsWith('/'));
        if (r.startsWith('/') && normalized(r) && normalized(target) && (target === r || target.startsWith(r.endsWith('/') ? r : `${r}/`))) expect(fast).toBe(slow);
      }),
      { numRuns: 5000 },
    );
  });

  it('insideOf is "relative to the root without leaving it"', () => {
    fc.assert(
      fc.property(root, path, (r, target) => {
        const rel = relative(r, target);
        expect(insideOf(r, target)).toBe(rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
      }),
      { numRuns: 5000 },
    );
  });

  it('names the usual cases', () => {
    expect(below('/repo', '/repo/projects/a.yaml')).toBe('projects/a.yaml');
    expect(below('/repo', '/repo')).toBe('');
    expect(below('/repo', '/repository/a.yaml')).toBeUndefined();
    expect(below('/repo', '/repo/../etc/passwd')).toBeUndefined();
    expect(insideOf('/repo', '/repo/../etc/passwd')).toBe(false);
    expect(insideOf('/repo', '/repo/./a/../b')).toBe(true);
    expect(insideOf('/repo', '/repository/a.yaml')).toBe(false);
    expect(insideOf('/repo', '/repo/...')).toBe(true);
    expect(insideOf('/repo', '/repo/..a/b')).toBe(true);
    expect(insideOf('/repo/a', '/repo/..')).toBe(false);
    // A root that is not absolute is never answered by its prefix: an empty one is a prefix of every path.
    expect(below('', '/etc/passwd')).toBeUndefined();
    expect(insideOf('', '/etc/passwd')).toBe(false);
  });
});
