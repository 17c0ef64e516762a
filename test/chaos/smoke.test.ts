/**
 * The chaos run's two-minute smoke (`npm run chaos -- --minutes=2`), as a user runs it: three Kafka
 * nodes, a Redis Cluster, three service replicas behind HAProxy, the workload and the nemesis, then
 * the checker over the whole history. It passes when every check does (nothing acknowledged lost or
 * stored twice, every follower complete and exact, no failed read outside a fault window), and
 * its report names each check. Every wait of the run is bounded (`--settle=2`: two minutes after
 * the last fault for the streams and followers to finish), so a system that does not recover fails
 * a check within the test's time rather than being killed by it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('npm run chaos, two minutes', () => {
  it(
    'injects faults under load and finds nothing lost, nothing twice, every follower exact',
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'rcs-chaos-'));
      const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'chaos/run.ts', '--minutes=2', '--seed=7', '--settle=2', `--out=${out}`],
          { timeout: 9 * 60_000, maxBuffer: 64 * 1024 * 1024 },
          (error, _stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr }),
        );
      });
      expect(run.stderr).toMatch(/fault: /);
      expect(run.stderr, run.stderr.split('\n').slice(-20).join('\n')).toMatch(/ok {5}every acknowledged result stored/);
      expect(run.code, run.stderr.split('\n').slice(-20).join('\n')).toBe(0);
      const report = readdirSync(out).find((name) => name.endsWith('.md')) as string;
      const text = readFileSync(join(out, report), 'utf8');
      expect(text).toMatch(/\| every follower got every message once and the final one \| ok \|/);
      expect(text).toMatch(/\| every stream and follower finished after the faults stopped \| ok \|/);
      expect(readdirSync(out).some((name) => name.endsWith('.svg'))).toBe(true);
    },
    10 * 60_000,
  );
});
