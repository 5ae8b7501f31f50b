// The `destination` label, the same concept for every collector: the host of a URL with the
// port when one is written (`api.example.com`, `127.0.0.1:4001`), never the path or query
// (unbounded, may hold secrets). Credentials in a URL (`user:pass@host`) are dropped by taking
// `host` only. The emulator's ground truth uses the same rule: both call src/common/url.ts.

import { hostOf } from '../common/url.js';

/**
 * The `destination` label of a schedule's destination: an http(s) URL gives its host[:port];
 * anything else is a URL Group name and is used as is.
 */
export function destinationLabel(destination: string): string {
  if (!/^https?:\/\//i.test(destination)) return destination;
  const host = hostOf(destination);
  if (host !== '') return host;
  // Not parseable as a URL: the text after the scheme up to the first separator.
  const authority = destination.replace(/^https?:\/\//i, '').split(/[/?#]/, 1)[0] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1);
}
