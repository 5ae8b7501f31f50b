// A unix-ms time for a log line: ISO 8601, or the number itself when it is no valid date (an
// upstream may send times far out of range; a log line must never throw).
export function timeText(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
