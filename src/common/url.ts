// URL helpers both the exporter and the emulator use, so the `destination` label and the
// emulator's ground truth follow one rule, and every printed address brackets IPv6 alike.

/** host[:port] of a URL (never path, query or credentials); "" when it is empty or does not parse. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** A host as it goes into a URL or a host:port pair: IPv6 addresses in brackets. */
export function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
