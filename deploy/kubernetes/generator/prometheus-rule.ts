// deploy/kubernetes/prometheus-rule.yaml is generated from the rules files, so the Prometheus
// Operator gets exactly the rules that `promtool test rules` checks. Regenerate after changing
// the rules: `npm run deploy:generate`; a test fails while the committed file differs.
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Document, parseDocument, YAMLSeq } from 'yaml';

// Paths from the repository root, three levels up both from this source file and from its
// build output (tmp/deploy-kubernetes/generator/).
const ROOT = new URL('../../../', import.meta.url);
/** The hand-written rules file. */
export const RULES_FILE = fileURLToPath(new URL('deploy/rules/upstash-exporter.rules.yml', ROOT));
/** The SLO rules, generated from deploy/slo/upstash-slos.yaml. */
export const SLO_RULES_FILE = fileURLToPath(new URL('deploy/rules/upstash-slos.rules.yml', ROOT));
/** The rules of the Redis databases (collector redis). */
export const REDIS_RULES_FILE = fileURLToPath(new URL('deploy/rules/upstash-redis.rules.yml', ROOT));
/**
 * The rules files whose groups the manifest holds, in order: every `*.rules.yml` of deploy/rules
 * (a product's rules file is found by being there; its promtool tests are `*.rules.test.yml`),
 * the exporter's own first, then by name.
 */
export const RULES_FILES: readonly string[] = shippedRuleFiles(fileURLToPath(new URL('deploy/rules/', ROOT)));

function shippedRuleFiles(dir: string): string[] {
  const names = readdirSync(dir).filter((name) => name.endsWith('.rules.yml'));
  const own = basename(RULES_FILE);
  return [own, ...names.filter((name) => name !== own).sort()].map((name) => join(dir, name));
}
/** Where the generated manifest is committed. */
export const PROMETHEUS_RULE_FILE = fileURLToPath(new URL('deploy/kubernetes/prometheus-rule.yaml', ROOT));

const HEADER = [
  ' Generated from deploy/rules/*.rules.yml by `npm run deploy:generate`: do not edit.',
  ' For the Prometheus Operator. Your Prometheus resource may select rules by label',
  ' (kube-prometheus-stack: `release: <release name>`): add that label, e.g. with a kustomize patch.',
].join('\n');

/** The PrometheusRule manifest holding the groups of Prometheus rules files, in order (comments kept). */
export function renderPrometheusRule(rulesTexts: readonly string[]): string {
  const groups = new YAMLSeq();
  for (const rulesText of rulesTexts) {
    const rules = parseDocument(rulesText);
    if (rules.errors.length > 0) throw new Error(`rules file: ${rules.errors[0]!.message}`);
    const own = rules.get('groups', true);
    if (!(own instanceof YAMLSeq)) throw new Error('rules file: no groups');
    // A comment before the first group belongs to the sequence: keep it on the group.
    const first = own.items[0] as { commentBefore?: string | null } | undefined;
    if (first !== undefined && own.commentBefore)
      first.commentBefore = [own.commentBefore, first.commentBefore].filter(Boolean).join('\n');
    groups.items.push(...(own.items as unknown[]));
  }

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
