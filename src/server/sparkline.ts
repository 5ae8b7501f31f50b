// Small plots drawn on the server as inline SVG: no script, no external file, so they show
// under a Content-Security-Policy that allows nothing external. Colours come from the page's
// stylesheet (classes s0, s1), so dark mode applies to them. Each plot carries its own text
// alternative: a description of the SVG and a table of values, one row a minute.

import { escapeHtml, formatDuration, formatNumber } from './html.js';
import type { Plot, PlotPoint } from './overview.js';

const WIDTH = 300;
const HEIGHT = 64;
const PAD = 4;
/** Rows of the value table: one a minute, the last hour at most. */
const TABLE_SPACING_MS = 60_000;
const TABLE_ROWS = 60;

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

function coordinates(points: readonly PlotPoint[], t0: number, t1: number, max: number): string {
  const x = (t: number): number => (t1 === t0 ? WIDTH : ((t - t0) / (t1 - t0)) * WIDTH);
  const y = (v: number): number => HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD);
  // A single point has no span: a level line across the plot shows its value.
  if (points.length === 1) return `0,${y(points[0]!.v).toFixed(1)} ${WIDTH},${y(points[0]!.v).toFixed(1)}`;
  return points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
}

/** Points one TABLE_SPACING_MS apart at least, newest kept, oldest first. */
function tableRows(points: readonly PlotPoint[]): number[] {
  const times: number[] = [];
  for (let i = points.length - 1; i >= 0 && times.length < TABLE_ROWS; i--) {
    const t = points[i]!.t;
    if (times.length === 0 || times[times.length - 1]! - t >= TABLE_SPACING_MS) times.push(t);
  }
  return times.reverse();
}

/** One plot: caption, SVG with a text description, and a collapsed table of its values. */
export function renderPlot(plot: Plot): string {
  const all = plot.series.flatMap((s) => s.points);
  const id = `plot-${plot.id}`;
  if (all.length === 0) {
    return `<figure class="plot" id="${id}"><figcaption>${escapeHtml(plot.title)}</figcaption><p class="muted">No points yet.</p></figure>`;
  }
  const t0 = Math.min(...all.map((p) => p.t));
  const t1 = Math.max(...all.map((p) => p.t));
  const max = Math.max(1, ...all.map((p) => p.v));
  const span = formatDuration((t1 - t0) / 1000);
  const unit = plot.unit === 's' ? ' s' : ` ${plot.unit}`;
  const describe = plot.series
    .map((s) => {
      const last = s.points[s.points.length - 1];
      const peak = s.points.reduce((m, p) => Math.max(m, p.v), 0);
      return last === undefined
        ? `${s.name}: no points`
        : `${s.name} now ${formatNumber(last.v)}${unit}, highest ${formatNumber(peak)}`;
    })
    .join('; ');
  const lines = plot.series
    .map((s, i) =>
      s.points.length === 0
        ? ''
        : `<polyline class="s${i}" vector-effect="non-scaling-stroke" points="${coordinates(s.points, t0, t1, max)}"/>`,
    )
    .join('');
  const legend = plot.series.map((s, i) => `<span class="key s${i}">${escapeHtml(s.name)}</span>`).join(' ');

  const rows = tableRows(plot.series[0]!.points)
    .map((t) => {
      const cells = plot.series.map((s) => {
        const point = s.points.find((p) => p.t === t);
        return `<td>${point === undefined ? '' : formatNumber(point.v)}</td>`;
      });
      return `<tr><th scope="row">${clock(t)}</th>${cells.join('')}</tr>`;
    })
    .join('');
  const head = plot.series.map((s) => `<th scope="col">${escapeHtml(s.name)}</th>`).join('');

  return `<figure class="plot" id="${id}">
<figcaption id="${id}-title">${escapeHtml(plot.title)} <span class="muted">(last ${span}, up to ${formatNumber(max >= 10 ? Math.round(max) : max)}${escapeHtml(unit)})</span> ${legend}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="${id}-title ${id}-desc"><desc id="${id}-desc">${escapeHtml(describe)}</desc><line class="axis" x1="0" y1="${HEIGHT - PAD}" x2="${WIDTH}" y2="${HEIGHT - PAD}" vector-effect="non-scaling-stroke"/>${lines}</svg>
<details><summary>Values (UTC, one a minute)</summary><table><thead><tr><th scope="col">time</th>${head}</tr></thead><tbody>${rows}</tbody></table></details>
</figure>`;
}
