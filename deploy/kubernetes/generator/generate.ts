// Writes deploy/kubernetes/prometheus-rule.yaml from the rules files. Run with
// `npm run deploy:generate` (compiles this folder to tmp/deploy-kubernetes first); commit the result.
import { readFileSync, writeFileSync } from 'node:fs';
import { PROMETHEUS_RULE_FILE, RULES_FILES, renderPrometheusRule } from './prometheus-rule.js';

writeFileSync(PROMETHEUS_RULE_FILE, renderPrometheusRule(RULES_FILES.map((file) => readFileSync(file, 'utf8'))));
console.log(`wrote ${PROMETHEUS_RULE_FILE}`);
