// The landing page at `/`: version, each collector's state, and links. Every dynamic value goes
// through escapeHtml; error texts are already sanitized by the runner (no secrets).

import type { CollectorStatus } from '../collectors/runner.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface LandingInput {
  version: string;
  statuses: readonly CollectorStatus[];
  ready: boolean;
  now: number;
}

function when(ms: number | null, now: number): string {
  if (ms === null) return 'never';
  const ago = Math.max(0, Math.round((now - ms) / 1000));
  return `${new Date(ms).toISOString()} (${ago} s ago)`;
}

function stateOf(status: CollectorStatus): string {
  if (!status.enabled) return `disabled: ${status.disabledReason ?? 'off'}`;
  const outcome =
    status.lastOutcome === null ? 'waiting for the first poll' : status.lastOutcome === 'success' ? 'ok' : 'failing';
  return status.running ? `${outcome}, polling now` : outcome;
}

function interval(status: CollectorStatus): string {
  return status.intervalMs === null ? '' : `${status.intervalMs / 1000} s`;
}

export function renderLanding(input: LandingInput): string {
  const rows = input.statuses
    .map((s) => {
      const cells = [
        s.name,
        stateOf(s),
        interval(s),
        s.enabled ? when(s.lastSuccess, input.now) : '',
        s.lastDuration === null ? '' : `${s.lastDuration.toFixed(3)} s`,
        s.lastError === null ? '' : `${s.lastError} (${when(s.lastErrorAt, input.now)})`,
        s.summary ?? '',
      ];
      const cls = !s.enabled ? 'off' : s.lastOutcome === 'failure' ? 'bad' : s.lastOutcome === 'success' ? 'ok' : 'wait';
      return `<tr class="${cls}">${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Upstash Exporter</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
tr.ok td:nth-child(2) { color: #186a1e; }
tr.bad td:nth-child(2) { color: #b00020; font-weight: bold; }
tr.off td { color: #888; }
</style>
</head>
<body>
<h1>Upstash Exporter</h1>
<p>Version ${escapeHtml(input.version)}. ${input.ready ? 'Ready: every enabled collector has succeeded at least once.' : 'Not ready yet: waiting for the first successful poll of every enabled collector.'}</p>
<ul>
<li><a href="metrics">Metrics</a></li>
<li><a href="-/healthy">Health</a> (liveness)</li>
<li><a href="-/ready">Readiness</a></li>
</ul>
<h2>Collectors</h2>
<table>
<thead><tr><th>collector</th><th>state</th><th>interval</th><th>last success</th><th>last duration</th><th>last error</th><th>seen</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</body>
</html>
`;
}
