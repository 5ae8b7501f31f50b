// Labels a registry adds to every series it holds (prom-client's default labels): the
// `qstash_region` of a region-scoped collector's registry. Set here so that the OpenMetrics
// renderer, which reads values with metric.get() and so without them, can apply them too.
import type { Registry } from 'prom-client';

const LABELS = new WeakMap<Registry, Readonly<Record<string, string>>>();

/** Gives every series of `registry` these labels (idempotent). */
export function setRegistryLabels(registry: Registry, labels: Readonly<Record<string, string>>): void {
  if (LABELS.get(registry) === labels) return;
  registry.setDefaultLabels({ ...labels });
  LABELS.set(registry, labels);
}

/** The labels setRegistryLabels gave the registry, if any. */
export function registryLabelsOf(registry: Registry): Readonly<Record<string, string>> | undefined {
  return LABELS.get(registry);
}
