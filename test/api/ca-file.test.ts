// http.ca_file is read once, when the configuration is loaded: every client trusts the PEM text
// that was checked then. Shown with a file that changes after loading: the emulator serves TLS
// with a certificate of CA A, the file names CA A at load and CA B afterwards; the clients built
// after the change still reach the emulator (a second reading would trust B and fail the
// handshake), and the management and delivery clients of every region alike.
//
// Skipped with a message when openssl is missing; under CI=true its absence fails.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryClient, createManagementClient } from '../../src/api/index.js';
import { loadConfig, renderConfigYaml } from '../../src/config/index.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { CANARY } from '../support/exporter-e2e-helpers.js';
import { requireBinaries } from '../support/prometheus.js';
import { makeTestCa, type TestCa } from '../support/tinyproxy.js';

const tools = requireBinaries('ca-file.test.ts', ['openssl']);

describe.skipIf(tools.skip)(`http.ca_file${tools.needs}`, () => {
  let caA: TestCa;
  let caB: TestCa;
  let upstream: EmulatorHandle;
  let dir: string;

  beforeAll(async () => {
    tools.ensure();
    caA = makeTestCa();
    caB = makeTestCa();
    upstream = await createEmulator({ ...CANARY }, { tls: caA.server });
    dir = mkdtempSync(join(tmpdir(), 'ca-file-'));
  }, 30_000);

  afterAll(async () => {
    await upstream?.close();
    caA?.remove();
    caB?.remove();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('is read once at load: clients built after the file changed trust what was checked', async () => {
    const caFile = join(dir, 'ca.pem');
    copyFileSync(caA.caFile, caFile);
    const env = { UPSTASH_EMAIL: CANARY.email, UPSTASH_API_KEY: CANARY.apiKey };
    const config = loadConfig(
      [
        '--qstash-url',
        upstream.url,
        '--qstash-token',
        CANARY.token,
        '--management-url',
        upstream.url,
        '--http-ca-file',
        caFile,
      ],
      env,
    );
    // check-config still names the file by its path.
    expect(renderConfigYaml(config)).toContain(caFile);

    copyFileSync(caB.caFile, caFile);
    const region = config.qstash.regions[0]!;
    const delivery = createDeliveryClient(config, region);
    const management = createManagementClient(config, region);
    try {
      expect(await delivery.listSchedules()).toEqual([]);
      expect((await management!.listVectorIndexes()).length).toBeGreaterThan(0);
    } finally {
      await Promise.all([delivery.close(), management?.close()]);
    }
  });
});
