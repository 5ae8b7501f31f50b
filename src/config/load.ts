// loadConfig: flags > environment > YAML file > defaults, validated strictly into ExporterConfig.
// Each setting is read by its row of the settings table (settings.ts); what is checked here
// spans several settings: pairs of secrets, the credentials, the collectors they enable, the
// active checks, and the files the server opens at start.

import { NO_PROXY_VARIABLES, parseProxyUrl, readProxyVariables } from '../api/proxy-choice.js';
import { COLLECTORS_KEEPING_STATE, type CollectorName } from './collector-catalogue.js';
import { ConfigError } from './errors.js';
import { configFile } from './kinds.js';
import { originOf, Sources, type RawValue } from './precedence.js';
import { checkActiveChecks } from './read-active-checks.js';
import { noCredentialsError, readCollectors } from './read-collectors.js';
import { readRegions } from './read-regions.js';
import type { ExporterConfig } from './schema.js';
import { settingByKey, SETTINGS } from './settings.js';
import { readEnv, readFlags, readYamlFile, type Layer } from './sources.js';
import { stateFileProblem } from './state-file-access.js';
import { setValueAt, validateConfig } from './validate.js';
import { loadWebConfig } from './web-config-file.js';

/** Flags, environment and the YAML file the first two name, highest precedence first. */
function readSources(argv: readonly string[], env: NodeJS.ProcessEnv): Sources {
  const flags = readFlags(argv);
  const environment = readEnv(env);
  const path = configFile.read(settingByKey('config'), new Sources([flags, environment]));
  const configRaw = flags.get('config') ?? environment.get('config');
  const yaml: Layer =
    path === null || configRaw === undefined ? new Map<string, RawValue>() : readYamlFile(path, configRaw.origin);
  return new Sources([flags, environment, yaml]);
}

/** Every row's value at its field; the values of the rows without one (the collectors' inputs) by key. */
function readSettings(sources: Sources): { candidate: Record<string, unknown>; unplaced: Map<string, unknown> } {
  const candidate: Record<string, unknown> = {};
  const unplaced = new Map<string, unknown>();
  for (const row of SETTINGS) {
    const value = row.kind.read(row, sources);
    if (row.field === undefined) unplaced.set(row.key, value);
    else setValueAt(candidate, row.field, value);
  }
  return { candidate, unplaced };
}

/**
 * The proxy settings that only work together (no_proxy with proxy_url, as in Prometheus; a
 * proxy_url replaces the environment's proxy), and the environment's proxy variables, read
 * here (so that loadConfig's caller decides which environment counts: the demo gives none) and
 * checked like any other input.
 */
function readProxy(sources: Sources, env: NodeJS.ProcessEnv, config: Omit<ExporterConfig, 'collectors'>): void {
  const { proxy } = config.http;
  if (proxy.noProxy.length > 0 && proxy.url === null) {
    throw new ConfigError(
      'http.no_proxy',
      `${originOf(sources, 'http.no_proxy')} applies to http.proxy_url only, which is not set; with the environment's proxy, list the hosts in NO_PROXY`,
    );
  }
  const environment = proxy.url === null && proxy.fromEnvironment ? readProxyVariables(env) : NO_PROXY_VARIABLES;
  for (const variable of [environment.httpsProxy, environment.httpProxy]) {
    if (variable === null) continue;
    try {
      parseProxyUrl(variable.value);
    } catch (error) {
      // The value is not shown: it may hold the proxy's password.
      throw new ConfigError(
        variable.name,
        `${variable.name} ${(error as Error).message} (value not shown); or --no-http-proxy-from-environment to ignore it`,
      );
    }
  }
  proxy.environment = environment;
}

/** Two secrets that only work together, as [key, value] pairs: both or neither, else `why`. */
function requireBoth(
  sources: Sources,
  pair: readonly [[string, string | null], [string, string | null]],
  why: string,
): void {
  const [[firstKey, first], [secondKey, second]] = pair;
  if ((first === null) === (second === null)) return;
  const [given, missing] = first === null ? [secondKey, firstKey] : [firstKey, secondKey];
  const { env, flag } = settingByKey(missing);
  throw new ConfigError(
    missing,
    `${originOf(sources, given)} is set but ${env} is not: ${why}; set ${env} (or ${env}_FILE, --${flag})`,
  );
}

/** The checks that span settings, in the order their messages are most useful. */
function checkAcross(sources: Sources, config: Omit<ExporterConfig, 'collectors'>): void {
  const { retry } = config.http;
  if (retry.baseDelayMs > retry.maxDelayMs) {
    const origin =
      sources.get('http.retry_base_delay')?.origin ?? sources.get('http.retry_max_delay')?.origin ?? 'http';
    throw new ConfigError(
      'http.retry_base_delay',
      `${origin}: the retry base delay is longer than the retry max delay; make the base delay shorter or the max delay longer`,
    );
  }
  const { qstash, management } = config;
  // Credentials last: a typo elsewhere is the more specific message.
  if (qstash.regions.length === 0 && management.email === null && management.apiKey === null)
    throw noCredentialsError();
  requireBoth(
    sources,
    [
      ['upstash_email', management.email],
      ['upstash_api_key', management.apiKey],
    ],
    'the management API needs both',
  );
}

/**
 * The state file must be usable before anything is served when a collector keeps its counters
 * there: one that cannot be read would be replaced by a fresh, less complete checkpoint, and one
 * that cannot be written loses the counts at every restart.
 */
function checkStateFile(sources: Sources, config: ExporterConfig): void {
  if (config.stateFile === null || !COLLECTORS_KEEPING_STATE.some((name) => config.collectors[name].enabled)) return;
  const problem = stateFileProblem(config.stateFile);
  if (problem === null) return;
  const origin = sources.givenOrDefault(settingByKey('state_file')).origin;
  throw new ConfigError(
    'state_file',
    `${origin}: ${problem}; give the exporter's user read and write access, choose another path, or write none to disable the state file`,
  );
}

/**
 * Builds the effective configuration from command-line flags (without the command word),
 * environment variables and the optional YAML file named by --config / CONFIG_FILE.
 * Throws ConfigError with a one-line message on any invalid or missing input.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ExporterConfig {
  const sources = readSources(argv, env);
  const { candidate, unplaced } = readSettings(sources);
  setValueAt(candidate, 'qstash.regions', readRegions(sources));
  const partial = candidate as Omit<ExporterConfig, 'collectors'>;
  checkAcross(sources, partial);
  readProxy(sources, env, partial);
  const token = partial.qstash.regions.length > 0 ? 'given' : null;
  const management = partial.management.email !== null && partial.management.apiKey !== null;
  const intervals = unplaced.get('poll_interval') as Record<CollectorName, number>;
  const switchedOff = unplaced.get('disabled_collectors') as CollectorName[];
  candidate.collectors = readCollectors(sources, { token, management }, intervals, switchedOff);
  checkActiveChecks(sources, partial);
  const config = validateConfig(candidate);
  // The files the server and the collectors open at start, checked here so that check-config
  // refuses whatever run would refuse, with the same line.
  if (config.webConfigFile !== null) loadWebConfig(config.webConfigFile);
  checkStateFile(sources, config);
  return config;
}
