// What the API clients log through: a structural logger (pino fits), in a module of its own so
// that the request core's parts (http-types.ts, call-gate.ts) can name it without importing
// each other.
export interface ApiLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}
