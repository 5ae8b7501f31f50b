// The last line of defence: every known secret value is cut out of each serialized log line, and
// of the error texts the landing page shows, whatever path it took to get there (a message, an
// error's cause, a header array, an upstream that echoes the credentials it was sent, encoded).

export const REDACTED = '[REDACTED]';

/** An encoded form shorter than this is left alone: it could match unrelated text (a number) by chance. */
const MIN_ENCODED_CHARS = 12;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Forms matched whatever their letter case: as is (and so in upper or lower case), JSON-escaped,
 * URL-encoded, and the hex of its UTF-8 bytes.
 */
function caseFreeForms(secret: string): string[] {
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    ...(hex.length >= MIN_ENCODED_CHARS ? [hex] : []),
  ];
}

/**
 * Base64 and base64url forms, matched as they are. Inside a longer encoded text (the base64 of
 * `user:password` in a Basic header) the secret starts at any byte offset, so its characters
 * depend on that offset modulo 3: for each, the characters made of the secret's bits alone.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [bytes.toString('base64'), bytes.toString('base64url')].filter(
    (form) => form.length >= MIN_ENCODED_CHARS,
  );
  for (let offset = 0; offset < 3; offset++) {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    if (end - first < MIN_ENCODED_CHARS) continue;
    forms.push(shifted.toString('base64').slice(first, end), shifted.toString('base64url').slice(first, end));
  }
  return forms;
}

function alternation(forms: readonly string[], flags: string): RegExp | null {
  // Longest first, so a secret that contains another is replaced whole.
  const unique = [...new Set(forms)].filter((form) => form !== '').sort((a, b) => b.length - a.length);
  return unique.length === 0 ? null : new RegExp(unique.map(escapeRegExp).join('|'), flags);
}

/** A function replacing every occurrence of the given secrets, in any of their forms, with `marker` ([REDACTED] by default). */
export function createScrubber(secrets: readonly string[], marker = REDACTED): (line: string) => string {
  const kept = secrets.filter((s) => s !== '');
  const encoded = alternation(kept.flatMap(base64Forms), 'g');
  const plain = alternation(kept.flatMap(caseFreeForms), 'gi');
  if (plain === null) return (line) => line;
  return encoded === null
    ? (line) => line.replace(plain, marker)
    : (line) => line.replace(encoded, marker).replace(plain, marker);
}
