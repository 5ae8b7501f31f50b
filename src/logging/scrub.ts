// The last line of defence: every known secret value is cut out of each serialized log line,
// whatever path it took to get there (a message, an error's cause, a header array).

export const REDACTED = '[REDACTED]';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret takes inside a JSON log line: as is, JSON-escaped, and URL-encoded. */
function variants(secret: string): string[] {
  return [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
}

/** A function replacing every occurrence of the given secrets with `marker` ([REDACTED] by default). */
export function createScrubber(secrets: readonly string[], marker = REDACTED): (line: string) => string {
  const forms = [...new Set(secrets.filter((s) => s !== '').flatMap(variants))]
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (line) => line;
  const pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  return (line) => line.replace(pattern, marker);
}
