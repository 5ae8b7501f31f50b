// Text helpers of the HTML pages: escaping and the number and duration formats a person reads.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** A number as the page shows it. */
export function formatNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return 'unlimited';
  if (Number.isNaN(value)) return 'n/a';
  return numberFormat.format(value);
}

/** A length of time in words a person reads at a glance: `4 ms`, `42 s`, `5 min 3 s`, `2 h 5 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 10) return `${numberFormat.format(Math.round(s * 10) / 10)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) {
    const min = Math.floor(s / 60);
    const rest = Math.round(s - min * 60);
    return rest === 0 ? `${min} min` : `${min} min ${rest} s`;
  }
  if (s < 86_400) {
    const h = Math.floor(s / 3600);
    return `${h} h ${Math.round((s - h * 3600) / 60)} min`;
  }
  const d = Math.floor(s / 86_400);
  return `${d} d ${Math.round((s - d * 86_400) / 3600)} h`;
}
