// Label values derived from upstream records.

/**
 * The `destination` label of a URL: its host with the port when one is written
 * (`api.example.com`, `127.0.0.1:4001`), never the path or query (unbounded, may hold secrets).
 * Anything that is not an http(s) URL is a URL Group name and is used as is. Credentials in a
 * URL (`user:pass@host`) are dropped by taking `host` only.
 */
export function destinationLabel(destination: string): string {
  if (!/^https?:\/\//i.test(destination)) return destination;
  try {
    return new URL(destination).host;
  } catch {
    // Not parseable as a URL: the text after the scheme up to the first separator.
    const rest = destination.replace(/^https?:\/\//i, '');
    const authority = rest.split(/[/?#]/, 1)[0] ?? '';
    return authority.slice(authority.lastIndexOf('@') + 1);
  }
}
