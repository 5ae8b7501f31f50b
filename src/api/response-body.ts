// Reading a response body: fully, under a byte cap and a total deadline (or, for error
// bodies, only a truncated excerpt). The errors it throws are told apart by failures.ts.
import type { Dispatcher } from 'undici';

export class BodyLimitError extends Error {}
export class BodyDeadlineError extends Error {}

/**
 * Feeds each chunk of `body` to `onChunk` as it comes; resolves at the body's end, or once
 * `onChunk` returns false (it destroyed the body: the rest is not wanted). Rejects with the
 * body's error, with what `onChunk` threw (the body destroyed), or when the body closes early.
 * Listeners rather than `for await`: the async iterator costs a promise and a microtask turn
 * per chunk, on every page of the log walk (docs/performance.md, "Cost per event").
 */
export function forEachChunk(
  body: Dispatcher.ResponseData['body'],
  onChunk: (chunk: Buffer) => boolean | void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      let more: boolean | void;
      try {
        more = onChunk(chunk);
      } catch (error) {
        body.destroy();
        settle(error as Error);
        return;
      }
      if (more === false) settle();
    };
    const onEnd = (): void => settle();
    const onClose = (): void => settle(new Error('response body closed before its end'));
    // Kept after settling: an error emitted after our own destroy has a listener.
    body.on('error', (error: Error) => settle(error));
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('close', onClose);
  });
}

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
    await forEachChunk(body, (chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        if (truncate) {
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          size = maxBytes;
          body.destroy();
          return false;
        }
        throw new BodyLimitError(`response body larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
      return true;
    });
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks, size);
}
