// How many entries the log walk asks for per page. It asks for the configured page size (more
// than the OpenAPI's 100 when allowed), learns from the answers what the service honours (a
// page shorter than asked that still has a cursor is a full page: the cap is its length), and
// within one cursor chain asks for half as many after a page too large to keep or too slow to
// read, down to 1. A smaller count on the same cursor continues the chain where it was (the
// cursor marks a position, not a page number), so nothing is skipped or read twice.
import { ApiPageTooLargeError, ApiTimeoutError } from '../../api/errors.js';
import type { LogsPage } from '../../api/delivery.js';
import type { Logger } from '../../logging/index.js';

/** Default of logs.page_size: the largest any Upstash documentation allows. */
export const DEFAULT_PAGE_SIZE = 1000;

export class PageSizer {
  readonly #configured: number;
  readonly #logger: Logger;
  /** The most entries the service was seen to return per page (null: not known). */
  #honoured: number | null = null;
  /** After a shrink: the most a new chain starts with (null: the size). */
  #ceiling: number | null = null;

  constructor(configured: number, logger: Logger) {
    this.#configured = configured;
    this.#logger = logger;
  }

  /** The page size: the configured one, or the service's cap once learnt. */
  get size(): number {
    return this.#honoured === null ? this.#configured : Math.min(this.#configured, this.#honoured);
  }

  /**
   * The count a new cursor chain starts with: the size, or after a shrink the count that worked,
   * doubled for each chain since (so a range of huge or slow entries is not halved down again
   * from the full size by every chain, and the size comes back once it is passed).
   */
  chainStart(): number {
    const size = this.size;
    if (this.#ceiling === null) return size;
    const start = Math.min(size, this.#ceiling);
    this.#ceiling = this.#ceiling * 2 >= size ? null : this.#ceiling * 2;
    return start;
  }

  /** Learns the service's cap from a page asked with `asked` entries. */
  observe(asked: number, page: LogsPage): void {
    const got = page.logs.length;
    if (page.cursor === undefined || got === 0 || got >= asked) return;
    if (this.#honoured !== null && got >= this.#honoured) return;
    this.#honoured = got;
    this.#logger.info(
      { asked, honoured: got },
      `the logs endpoint returns at most ${got} entries a page; asking for ${got} from now on`,
    );
  }

  /**
   * After a failed page: the smaller count to ask the same range again with, or null when the
   * error is not about the page's size or the count is already 1.
   */
  shrink(count: number, error: unknown): number | null {
    if (!(error instanceof ApiPageTooLargeError || error instanceof ApiTimeoutError)) return null;
    if (count <= 1) return null;
    const smaller = Math.max(1, Math.floor(count / 2));
    this.#ceiling = smaller;
    this.#logger.warn(
      { count, next: smaller, code: error.code },
      `log page of ${count} entries too large or too slow to read; asking for ${smaller} on the same cursor`,
    );
    return smaller;
  }
}
