// Rewrites docs/metrics.md's family tables from the declared families (after `npm run build`).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderMetricsDoc } from '../dist/metrics-doc.js';

const path = new URL('../docs/metrics.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = renderMetricsDoc(before);
if (after !== before) writeFileSync(path, after);
console.log(after === before ? 'docs/metrics.md: up to date' : 'docs/metrics.md: tables rewritten');
