// The container image built from the real Dockerfile and run against the emulator
// (deploy/container/test-image.sh: every collector on /metrics, non-root, HEALTHCHECK, SIGTERM
// with the state saved, counters continued by a new container on the same volume, read-only
// root; the second container runs with basic auth on, its health endpoints left open, and its
// HEALTHCHECK must pass). Needs podman: skipped with a message without it, except under CI=true. CI runs it in
// one of its two Node passes only (UPSTASH_EXPORTER_SKIP_IMAGE_TEST set by .ci/run for the other).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasPodman = spawnSync('podman', ['--version']).status === 0;
const skipReason = process.env.UPSTASH_EXPORTER_SKIP_IMAGE_TEST
  ? `the image test runs once per CI run: ${process.env.UPSTASH_EXPORTER_SKIP_IMAGE_TEST}`
  : !hasPodman && process.env.CI !== 'true'
    ? 'podman is not installed (apt-get install podman buildah runc debootstrap uidmap); skipping the container image test'
    : null;

describe('container image', () => {
  if (skipReason !== null) {
    it.skip(skipReason, () => undefined);
    return;
  }
  it(
    'builds from the Dockerfile and passes every check of deploy/container/test-image.sh',
    { timeout: 15 * 60_000 },
    () => {
      const run = spawnSync('bash', ['deploy/container/test-image.sh'], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 14 * 60_000,
      });
      const output = `${run.stdout}${run.stderr}`;
      process.stdout.write(output);
      expect(output).not.toMatch(/^SKIP /m);
      expect(output.match(/^FAIL .*/gm) ?? []).toEqual([]);
      expect(output).toContain('all container checks passed');
      expect(output).toContain('ok   HEALTHCHECK passes with basic auth on');
      expect(output).toContain('ok   basic auth on: /metrics without credentials is 401');
      expect(run.status).toBe(0);
    },
  );
});
