// Per-test setup of the collector tests that read a fixture server. Kept out of
// exporter-e2e-helpers.ts because it registers vitest hooks, and bench/ imports that file.
import { afterEach, beforeEach } from 'vitest';
import { captureLogger, startFixtureServer, type CapturedLogger, type FixtureServer } from './exporter-e2e-helpers.js';

export interface FixtureClient<C> {
  fixture: FixtureServer;
  /** A client of the fixture server; a test may replace it (the replacement is closed after it). */
  client: C;
  log: CapturedLogger;
}

/**
 * Per test (registers beforeEach/afterEach in the calling scope): a fresh fixture server, a
 * client of it made by `connect`, and a debug-level captured logger; client and server are
 * closed after the test. Read the fields inside the tests: they change from test to test.
 */
export function fixtureClientPerTest<C extends { close(): Promise<void> }>(
  connect: (url: string) => C,
): FixtureClient<C> {
  const current = {} as FixtureClient<C>;
  beforeEach(async () => {
    current.fixture = await startFixtureServer();
    current.client = connect(current.fixture.url);
    current.log = captureLogger('debug');
  });
  afterEach(async () => {
    await current.client.close();
    await current.fixture.close();
  });
  return current;
}
