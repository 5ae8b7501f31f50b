// What the code says about anything thrown, by one rule everywhere: its message, and its code.

/** The message of anything thrown: an Error's message, else the value as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A code as the project's errors (ERR_API_AUTH), undici's (UND_ERR_SOCKET) and the system's (ECONNRESET) spell it. */
const CODE_SHAPE = /^[A-Z][A-Z0-9_]{1,63}$/;
/** An error class's name (TypeError, AbortError). */
const CLASS_SHAPE = /^[A-Za-z][A-Za-z0-9]{1,63}$/;

/**
 * The code of anything thrown: its own string `code` when it is shaped like one, else the name of
 * its class when that says more than `Error` (a TypeError is a bug worth naming), else ERR_UNKNOWN.
 * Always a short identifier, never text from outside, so it fits a label and a log line.
 */
export function errorCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && CODE_SHAPE.test(code)) return code;
  if (error instanceof Error && error.name !== 'Error' && CLASS_SHAPE.test(error.name)) return error.name;
  return 'ERR_UNKNOWN';
}
