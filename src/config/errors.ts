// The one error type of configuration: a single printable line, never a secret's value.

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  /** The setting at fault, as its YAML key (`qstash_token`, `http.connect_timeout`, ...). */
  readonly key: string;

  constructor(key: string, message: string) {
    // The CLI prints the message alone; keep it on one line whatever the inputs were.
    super(message.replace(/\s*[\r\n]+\s*/g, ' '));
    this.name = 'ConfigError';
    this.key = key;
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError;
}

/**
 * Quotes a user-given (non-secret) value for an error message: JSON-quoted so control
 * characters stay visible, shortened so one bad value cannot flood the line, and with any
 * `user:password@` part of a URL-like value hidden.
 */
export function quoteValue(value: unknown): string {
  let text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  text = text.replace(/(\/\/)[^/@\s]*@/g, '$1***@');
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  return JSON.stringify(text);
}
