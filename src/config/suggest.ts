// "Did you mean" for typos in flags, YAML keys, collector names and enum values.

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

// Spelling variants of one name (qstash-token, qstashToken, QSTASH_TOKEN) compare as equal.
function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]/g, '');
}

function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/**
 * The candidate closest to `input`, or undefined when none is close enough to be a likely
 * typo. Dotted candidates also match on their last segment, so `connect_timeout` at the top of
 * a YAML file finds `http.connect_timeout`.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const wanted = normalise(input);
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    const whole = editDistance(wanted, normalise(candidate));
    const tail = editDistance(normalise(lastSegment(input)), normalise(lastSegment(candidate))) + 0.5;
    const score = Math.min(whole, tail);
    if (score < bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  const tolerance = Math.max(2, Math.floor(wanted.length / 3));
  return bestScore <= tolerance ? best : undefined;
}

/** "; did you mean X?" or the fallback hint when nothing is close. */
export function didYouMean(input: string, candidates: readonly string[], fallback: string): string {
  const match = closestMatch(input, candidates);
  return match === undefined ? fallback : `did you mean ${match}?`;
}

/**
 * For a map under an unknown top-level key (`qstash: {token: ...}`), the flat keys its entries
 * stand for (`qstash_token`): the flat spelling of settings that have no section. Empty when
 * none of its entries is such a key.
 */
export function flatKeysOfSection(section: string, entries: readonly string[], known: ReadonlySet<string>): string[] {
  return entries.map((entry) => `${section}_${entry}`).filter((key) => known.has(key));
}
