// Writes deploy/kubernetes/prometheus-rule.yaml from the rules files, and the JSON forms of the
// rules and dashboards the mixin reads (mixin/generated/). Run with `npm run deploy:generate`
// (compiles this folder to tmp/deploy-kubernetes first); commit the result.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIXIN_GENERATED_DIR, renderMixinFiles } from './mixin.js';
import { PROMETHEUS_RULE_FILE, RULES_FILES, renderPrometheusRule } from './prometheus-rule.js';

writeFileSync(PROMETHEUS_RULE_FILE, renderPrometheusRule(RULES_FILES.map((file) => readFileSync(file, 'utf8'))));
console.log(`wrote ${PROMETHEUS_RULE_FILE}`);
mkdirSync(MIXIN_GENERATED_DIR, { recursive: true });
for (const { name, text } of renderMixinFiles()) {
  writeFileSync(join(MIXIN_GENERATED_DIR, name), text);
  console.log(`wrote ${join(MIXIN_GENERATED_DIR, name)}`);
}
