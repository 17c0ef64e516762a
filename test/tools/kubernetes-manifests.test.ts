/**
 * The Kubernetes manifests of both shapes, as scripts/check-manifests.ts checks them in CI: valid
 * against the Kubernetes API schemas (offline, kubernetes-models), and each Deployment with what an
 * operator expects (probes, resources, the hardened security context, a grace period above the drain
 * the service's settings give, a PodDisruptionBudget). Each check is shown to fail on a manifest
 * broken in its one way.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { EXIT_MARGIN_MS, MANIFESTS, manifestFindings, parseManifests, type Manifest } from '../../scripts/check-manifests.js';
import { SETTINGS } from '../../src/config/settings.js';

const root = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const run = promisify(execFile);

/** A copy of a manifest file's objects, changed by `edit` on its first Deployment. */
function broken(file: string, edit: (deployment: any, all: Manifest[]) => void): string {
  const all = parseManifests(read(file));
  edit(
    all.find((manifest) => manifest.kind === 'Deployment'),
    all,
  );
  return all.map((manifest) => stringify(manifest)).join('---\n');
}

describe.each(MANIFESTS)('%s', (file) => {
  const manifests = parseManifests(read(file));
  const deployments = manifests.filter((manifest) => manifest.kind === 'Deployment');

  it('validates against the Kubernetes API schemas, and every Deployment is as operators expect', () => {
    expect(deployments.length).toBeGreaterThan(0);
    expect(manifestFindings(read(file))).toEqual([]);
  });

  it('gives every Deployment a grace period above SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS as its container gets them', () => {
    const config = (manifests.find((manifest) => manifest.kind === 'ConfigMap') as any).data as Record<string, string>;
    for (const deployment of deployments as any[]) {
      const spec = deployment.spec.template.spec;
      for (const container of spec.containers) {
        const value = (name: 'SHUTDOWN_DELAY_MS' | 'SHUTDOWN_TIMEOUT_MS') =>
          Number(container.env?.find((variable: any) => variable.name === name)?.value ?? config[name] ?? SETTINGS[name].default);
        expect(spec.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(value('SHUTDOWN_DELAY_MS') + value('SHUTDOWN_TIMEOUT_MS') + EXIT_MARGIN_MS);
      }
    }
  });

  it('fails a document the schema refuses: a misspelt kind, a string where a number goes, a missing required field', () => {
    expect(manifestFindings(broken(file, (d) => (d.kind = 'Deploymnet'))).join('\n')).toMatch(/no schema for this kind/);
    expect(manifestFindings(broken(file, (d) => (d.spec.replicas = 'three'))).join('\n')).toMatch(/Deployment .*replicas/);
    expect(manifestFindings(broken(file, (d) => delete d.spec.selector)).join('\n')).toMatch(/Deployment .*selector/);
    expect(manifestFindings(broken(file, (d) => delete d.spec.template.spec.containers[0].name)).join('\n')).toMatch(/Deployment .*name/);
  });

  it('fails a Deployment without what operators expect, each on its own', () => {
    const cases: [string, (d: any, all: Manifest[]) => void][] = [
      ['livenessProbe: path /readyz', (d) => (d.spec.template.spec.containers[0].livenessProbe.httpGet.path = '/readyz')],
      ['readinessProbe: path /healthz', (d) => (d.spec.template.spec.containers[0].readinessProbe.httpGet.path = '/healthz')],
      ["readinessProbe: port 8080 is not the service's PORT", (d) => (d.spec.template.spec.containers[0].readinessProbe.httpGet.port = 8080)],
      ['livenessProbe: no httpGet probe', (d) => delete d.spec.template.spec.containers[0].livenessProbe],
      ['no CPU and memory requests', (d) => delete d.spec.template.spec.containers[0].resources.requests],
      ['no memory limit', (d) => delete d.spec.template.spec.containers[0].resources.limits],
      ['runAsNonRoot is not true', (d) => (d.spec.template.spec.containers[0].securityContext.runAsNonRoot = false)],
      ["runAsUser is not the image's uid", (d) => (d.spec.template.spec.containers[0].securityContext.runAsUser = 0)],
      ['readOnlyRootFilesystem is not true', (d) => delete d.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem],
      ['allowPrivilegeEscalation is not false', (d) => delete d.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation],
      ['capabilities do not drop ALL', (d) => (d.spec.template.spec.containers[0].securityContext.capabilities.drop = ['NET_RAW'])],
      ['seccompProfile is not RuntimeDefault', (d) => (d.spec.template.spec.securityContext.seccompProfile = { type: 'Unconfined' })],
      ['terminationGracePeriodSeconds', (d) => (d.spec.template.spec.terminationGracePeriodSeconds = 20)],
      ['terminationGracePeriodSeconds', (_d, all) => ((all.find((m) => m.kind === 'ConfigMap') as any).data.SHUTDOWN_TIMEOUT_MS = '40000')],
      [
        'no PodDisruptionBudget selects its pods',
        (_d, all) => all.filter((m) => m.kind === 'PodDisruptionBudget').forEach((m: any) => (m.spec.selector.matchLabels = { app: 'other' })),
      ],
    ];
    for (const [finding, edit] of cases) {
      const findings = manifestFindings(broken(file, edit));
      expect(findings.join('\n'), finding).toContain(finding);
    }
  });
});

describe('scripts/check-manifests.ts', () => {
  it('exits 0 on the manifests and 1 naming the finding on a broken one', async () => {
    await expect(run('npx', ['tsx', 'scripts/check-manifests.ts'], { cwd: root })).resolves.toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'manifests-'));
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      broken(MANIFESTS[0]!, (d) => (d.spec.template.spec.containers[0].ports[0].containerPort = 'http')),
    );
    const failed = await run('npx', ['tsx', 'scripts/check-manifests.ts', file], { cwd: root }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/broken\.yaml: apps\/v1\/Deployment result-collection-service: .*containerPort/);
  }, 60_000);
});
