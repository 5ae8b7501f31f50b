// Writes every dashboard to <dir>/<uid>.json (default: ./dashboards), and where each alert's
// threshold stands in them to mixin/generated/dashboard-alert-thresholds.json. Run with `npm run dashboards`,
// which compiles dashboards/src to tmp/dashboards first; commit the JSON it writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ALERT_THRESHOLD_STEPS_FILE, alertThresholdSteps, buildDashboards, renderDashboard } from './index.js';

const outputDir = resolve(process.argv[2] ?? 'dashboards');
mkdirSync(outputDir, { recursive: true });
const dashboards = buildDashboards();
for (const { file, dashboard } of dashboards) {
  writeFileSync(resolve(outputDir, file), renderDashboard(dashboard));
  console.log(`wrote ${resolve(outputDir, file)}`);
}
// Which panel step is which alert's threshold, for the mixin (its dashboards follow _config.alertThresholds).
writeFileSync(ALERT_THRESHOLD_STEPS_FILE, `${JSON.stringify(alertThresholdSteps(dashboards), null, 2)}\n`);
console.log(`wrote ${ALERT_THRESHOLD_STEPS_FILE}`);
