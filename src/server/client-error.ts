// A request node's HTTP parser refuses before express sees it (a URL or headers beyond
// maxHeaderSize, a malformed request, a headers timeout): answered with its status and a line
// of text, as node's default handler does, instead of a reset connection, and logged at debug.

import type { Duplex } from 'node:stream';
import type { Logger } from '../logging/index.js';

/** The bytes node read of the request (its parser attaches them to the error). */
interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
};

/**
 * The status of a refused request. Node reports a URL too long and headers too large alike
 * (HPE_HEADER_OVERFLOW: its limit covers the request line and the headers): when the bytes read
 * start a request whose first line has not ended, the URL is what ran over, so 414.
 */
export function clientErrorStatus(error: ParserError): number {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      const raw = error.rawPacket;
      const startsRequest = raw !== undefined && /^[A-Z]+ /.test(raw.subarray(0, 16).toString('latin1'));
      return startsRequest && !raw.includes(0x0a) ? 414 : 431;
    }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

/** Time the client gets to read the answer before the connection is cut. */
const ANSWER_GRACE_MS = 1_000;

/** The server's `clientError` listener. */
export function answerClientError(logger: Logger): (error: ParserError, socket: Duplex) => void {
  return (error, socket) => {
    const status = clientErrorStatus(error);
    logger.debug({ err: error.message, code: error.code, status }, 'HTTP client error');
    // A connection reset by the client, or whose response in flight has begun, gets nothing more
    // (node's own rule: an answer written into a response would corrupt it).
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const body = `${REASONS[status]}.\n`;
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // The rest of what the client sends is read and dropped: closing with unread bytes would
    // reset the connection and could lose the answer on its way.
    socket.resume();
    setTimeout(() => socket.destroy(), ANSWER_GRACE_MS).unref();
  };
}
