// "Did you mean ...?" for typos in field names, kinds and enum values.

/** Edit distance (insertions, deletions, substitutions; an adjacent swap counts once). */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, when close enough to be a plausible typo: at most a third of
 * the word's length in edits (at least 1, at most 4), or equal ignoring case and separators.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > 200) return undefined;
  const normalize = (text: string) => text.toLowerCase().replace(/[-_\s]/g, '');
  const limit = Math.max(1, Math.min(4, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (normalize(candidate) === normalize(word)) return candidate;
    const distance = levenshtein(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const match = nearest(word, candidates);
  return match === undefined ? undefined : `did you mean \`${match}\`?`;
}

/** `` `shpo` (did you mean `shop`?), `x` ``: names that match nothing, each with its nearest candidate when there is one. */
export function listUnknown(words: readonly string[], candidates: readonly string[]): string {
  return words
    .map((word) => {
      const hint = didYouMean(word, candidates);
      return `\`${word}\`${hint === undefined ? '' : ` (${hint})`}`;
    })
    .join(', ');
}
