// A real CPU quota for a child process: a cgroup with a CFS bandwidth limit, the way a container
// runtime applies a Kubernetes CPU limit (resources.limits.cpu: 100m is a quota of 10 ms every
// 100 ms). The kernel stops scheduling the process for the rest of each period once its quota
// is spent. cgroup v1 (`/sys/fs/cgroup/cpu`) and v2 (`cpu.max`) are both handled; null where
// neither can be written (not root, no cpu controller), and the caller says so.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface CpuQuota {
  /** The cgroup's directory. */
  readonly path: string;
  /** Moves a process into the cgroup. */
  add(pid: number): Promise<void>;
  /** Moves the cgroup's processes back to the root and removes it. */
  remove(): Promise<void>;
}

const V1 = '/sys/fs/cgroup/cpu';
const V2 = '/sys/fs/cgroup';

let made = 0;

/** A cgroup limited to `share` of one core (0.1 = 100m), or null where this machine cannot make one. */
export async function cpuQuota(share: number, periodUs = 100_000): Promise<CpuQuota | null> {
  const quotaUs = Math.max(1_000, Math.round(share * periodUs));
  const name = `upstash-exporter-test-${process.pid}-${++made}`;
  const v1 = existsSync(join(V1, 'cpu.cfs_quota_us'));
  const root = v1 ? V1 : V2;
  if (!v1 && !existsSync(join(V2, 'cgroup.controllers'))) return null;
  const path = join(root, name);
  try {
    await mkdir(path);
    if (v1) {
      await writeFile(join(path, 'cpu.cfs_period_us'), String(periodUs));
      await writeFile(join(path, 'cpu.cfs_quota_us'), String(quotaUs));
    } else {
      await writeFile(join(path, 'cpu.max'), `${quotaUs} ${periodUs}`);
    }
  } catch {
    await rmdir(path).catch(() => undefined);
    return null;
  }
  return {
    path,
    add: (pid) => writeFile(join(path, 'cgroup.procs'), String(pid)),
    async remove() {
      const pids = (await readFile(join(path, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      for (const pid of pids) await writeFile(join(root, 'cgroup.procs'), pid).catch(() => undefined);
      await rmdir(path).catch(() => undefined);
    },
  };
}
