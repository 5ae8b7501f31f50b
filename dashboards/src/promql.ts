// PromQL read with Prometheus' own grammar (lezer-promql): the metric names an expression selects,
// so tests can tell which families the shipped dashboards and rules read.
import { parser } from '@prometheus-io/lezer-promql';

/** Metric names of the vector selectors of an expression, in order, repeated as they occur. */
export function metricNames(expr: string): string[] {
  const names: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier');
        if (identifier !== null) names.push(expr.slice(identifier.from, identifier.to));
      }
      if (node.name === 'LabelName' && expr.slice(node.from, node.to) === '__name__') {
        throw new Error(`selects by __name__, so its metric names cannot be checked: ${expr}`);
      }
    },
  });
  return names;
}

/**
 * `expr` with `matchers` added to every vector selector: `a / (b{x="1"} > 0)` with `job=~"$job"`
 * is `a{job=~"$job"} / (b{x="1",job=~"$job"} > 0)`. For a panel that shows what an alert compares,
 * read from the rule, under the dashboard's filters.
 */
export function withMatchers(expr: string, matchers: string[]): string {
  const insertions: { at: number; text: string }[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name !== 'VectorSelector') return;
      const list = node.node.getChild('LabelMatchers');
      if (list === null) {
        const identifier = node.node.getChild('Identifier');
        if (identifier === null) throw new Error(`a vector selector without a name in: ${expr}`);
        insertions.push({ at: identifier.to, text: `{${matchers.join(',')}}` });
      } else {
        const empty = expr.slice(list.from + 1, list.to - 1).trim() === '';
        insertions.push({ at: list.from + 1, text: matchers.join(',') + (empty ? '' : ',') });
      }
    },
  });
  let result = expr;
  for (const { at, text } of insertions.sort((a, b) => b.at - a.at))
    result = result.slice(0, at) + text + result.slice(at);
  return result.replace(/\s+/g, ' ').trim();
}

export interface LabelMatcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** The vector selectors of an expression: metric name (empty when none) and label matchers. */
export function vectorSelectors(expr: string): { name: string; matchers: LabelMatcher[] }[] {
  const selectors: { name: string; matchers: LabelMatcher[] }[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.name !== 'VectorSelector') return;
      const identifier = node.node.getChild('Identifier');
      const matchers: LabelMatcher[] = [];
      for (const matcher of node.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
        const [label, op, value] = ['LabelName', 'MatchOp', 'StringLiteral'].map((child) => {
          const found = matcher.getChild(child);
          return found === null ? '' : expr.slice(found.from, found.to);
        });
        matchers.push({ label: label!, op: op as LabelMatcher['op'], value: JSON.parse(value!) as string });
      }
      selectors.push({ name: identifier === null ? '' : expr.slice(identifier.from, identifier.to), matchers });
    },
  });
  return selectors;
}

/** Whether a label value (absent: '') satisfies a matcher; regexes are anchored, as in PromQL. */
export function matches(matcher: LabelMatcher, value: string): boolean {
  switch (matcher.op) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return new RegExp(`^(?:${matcher.value})$`).test(value);
    case '!~':
      return !new RegExp(`^(?:${matcher.value})$`).test(value);
  }
}
