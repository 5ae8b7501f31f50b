// Reading a response body: fully, under a byte cap and a total deadline (or, for error
// bodies, only a truncated excerpt). The errors it throws are told apart by failures.ts.
import type { Dispatcher } from 'undici';

export class BodyLimitError extends Error {}
export class BodyDeadlineError extends Error {}

/**
 * Read a response body fully, refusing more than `maxBytes` (or, with `truncate`, keeping
 * only the first `maxBytes`) and giving up after `deadlineMs` in total.
 */
export async function readBody(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  deadlineMs: number,
  truncate = false,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const deadline = setTimeout(() => {
    body.destroy(new BodyDeadlineError('body deadline'));
  }, deadlineMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        if (truncate) {
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          size = maxBytes;
          body.destroy();
          break;
        }
        body.destroy();
        throw new BodyLimitError(`response body larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks, size);
}
