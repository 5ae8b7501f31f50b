// deploy/kubernetes/prometheus-rule.yaml is generated from the rules file, so the Prometheus
// Operator gets exactly the rules that `promtool test rules` checks. Regenerate after changing
// the rules: `npm run deploy:generate`; a test fails while the committed file differs.
import { fileURLToPath } from 'node:url';
import { Document, parseDocument, type Node } from 'yaml';

// Paths from the repository root, three levels up both from this source file and from its
// build output (tmp/deploy-kubernetes/generator/).
const ROOT = new URL('../../../', import.meta.url);
/** The rules file. */
export const RULES_FILE = fileURLToPath(new URL('deploy/rules/upstash-exporter.rules.yml', ROOT));
/** Where the generated manifest is committed. */
export const PROMETHEUS_RULE_FILE = fileURLToPath(new URL('deploy/kubernetes/prometheus-rule.yaml', ROOT));

const HEADER = [
  ' Generated from deploy/rules/upstash-exporter.rules.yml by `npm run deploy:generate`: do not edit.',
  ' For the Prometheus Operator. Your Prometheus resource may select rules by label',
  ' (kube-prometheus-stack: `release: <release name>`): add that label, e.g. with a kustomize patch.',
].join('\n');

/** The PrometheusRule manifest holding the groups of a Prometheus rules file (comments kept). */
export function renderPrometheusRule(rulesText: string): string {
  const rules = parseDocument(rulesText);
  if (rules.errors.length > 0) throw new Error(`rules file: ${rules.errors[0]!.message}`);
  const groups = rules.get('groups', true) as Node | undefined;
  if (groups === undefined) throw new Error('rules file: no groups');

  const manifest = new Document({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'upstash-exporter',
      labels: { 'app.kubernetes.io/name': 'upstash-exporter' },
    },
    spec: { groups: null },
  });
  manifest.setIn(['spec', 'groups'], groups);
  manifest.commentBefore = HEADER;
  return manifest.toString({ lineWidth: 0 });
}
