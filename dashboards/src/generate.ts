// Writes every dashboard to <dir>/<uid>.json (default: ./dashboards). Run with `npm run dashboards`,
// which compiles dashboards/src to tmp/dashboards first; commit the JSON it writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildDashboards, renderDashboard } from './index.js';

const outputDir = resolve(process.argv[2] ?? 'dashboards');
mkdirSync(outputDir, { recursive: true });
for (const { file, dashboard } of buildDashboards()) {
  writeFileSync(resolve(outputDir, file), renderDashboard(dashboard));
  console.log(`wrote ${resolve(outputDir, file)}`);
}
