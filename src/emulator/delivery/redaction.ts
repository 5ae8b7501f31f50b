// Redaction: fields named in `Upstash-Redact-Fields` appear as `REDACTED:<sha256 hex>` in every
// record (log entries, schedules, callback payloads) while the original is still delivered.
import { createHash } from 'node:crypto';
import type { HeaderMap, RedactionSpec } from './message-options.js';

export function redactedValue(value: string | Buffer): string {
  return `REDACTED:${createHash('sha256').update(value).digest('hex')}`;
}

/** The body as records show it: base64, or the redaction marker. */
export function recordedBody(body: Buffer, redact: RedactionSpec): string {
  return redact.body ? redactedValue(body) : body.toString('base64');
}

/** The headers as records show them, with redacted values replaced one by one. */
export function recordedHeaders(headers: HeaderMap, redact: RedactionSpec): HeaderMap {
  const out: HeaderMap = {};
  for (const [name, values] of Object.entries(headers)) {
    const hide = redact.allHeaders || redact.headerNames.has(name.toLowerCase());
    out[name] = hide ? values.map((value) => redactedValue(value)) : [...values];
  }
  return out;
}
