// PLACEHOLDER, replaced in the next phase by the real daemon (collectors, HTTP server, state).
// Only the signature is final: the CLI's `run` command calls it and closes it on SIGINT/SIGTERM.
import type { ExporterConfig } from './config/index.js';
import type { Logger } from './logging/index.js';

export interface ExporterHandle {
  close(): Promise<void>;
}

export function startExporter(config: ExporterConfig, logger: Logger): Promise<ExporterHandle> {
  logger.warn(
    { collectors: Object.entries(config.collectors).filter(([, c]) => c.enabled).map(([name]) => name) },
    'exporter collectors not built yet',
  );
  return Promise.resolve({ close: () => Promise.resolve() });
}
