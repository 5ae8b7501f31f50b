// De-duplication: a message whose de-duplication id (or content hash, when content-based
// de-duplication is on) was seen within the window is not enqueued again; the caller gets the
// earlier message id. The window runs on the virtual clock, so the time scale shortens it.
import { createHash } from 'node:crypto';
import type { HeaderMap } from './message-options.js';

export const DEDUP_WINDOW_MS = 10 * 60_000;

export class DedupIndex {
  private readonly seen = new Map<string, { messageId: string; expires: number }>();
  private insertsSincePrune = 0;

  constructor(
    private readonly virtualNow: () => number,
    private readonly windowMs = DEDUP_WINDOW_MS,
  ) {}

  /** The earlier message id when `key` was seen within the window. */
  lookup(key: string): string | undefined {
    const hit = this.seen.get(key);
    if (!hit) return undefined;
    if (hit.expires <= this.virtualNow()) {
      this.seen.delete(key);
      return undefined;
    }
    return hit.messageId;
  }

  remember(key: string, messageId: string): void {
    this.seen.set(key, { messageId, expires: this.virtualNow() + this.windowMs });
    if (++this.insertsSincePrune >= 1000) this.prune();
  }

  clear(): void {
    this.seen.clear();
  }

  private prune(): void {
    this.insertsSincePrune = 0;
    const now = this.virtualNow();
    for (const [key, hit] of this.seen) if (hit.expires <= now) this.seen.delete(key);
  }
}

/** Key of an explicit de-duplication id, per target URL (so each URL Group endpoint has its own). */
export function idDedupKey(deduplicationId: string, targetUrl: string): string {
  return `id\u0000${deduplicationId}\u0000${targetUrl}`;
}

/** Key of content-based de-duplication: target URL, body, Content-Type and forwarded headers. */
export function contentDedupKey(targetUrl: string, body: Buffer, headers: HeaderMap): string {
  const hash = createHash('sha256');
  hash.update(targetUrl).update('\u0000').update(body).update('\u0000');
  for (const name of Object.keys(headers).sort()) {
    hash.update(name.toLowerCase()).update('=').update(headers[name]!.join(',')).update('\u0000');
  }
  return `content\u0000${hash.digest('hex')}`;
}
