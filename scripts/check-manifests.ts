/**
 * Checks the Kubernetes manifests of both shapes (deploy/kubernetes/*.yaml and split/) offline:
 * every document against the Kubernetes API schema of its kind (kubernetes-models, generated from
 * the official OpenAPI definitions), then what an operator expects of each Deployment
 * ({@link deploymentFindings}). Prints each finding and exits 1 when there is one.
 *
 *   npx tsx scripts/check-manifests.ts [file...]
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigMap, Service, type IContainer, type IPodSpec, type ISecurityContext } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parseAllDocuments } from 'yaml';
import { SETTINGS } from '../src/config/settings.js';

/** The manifests of both shapes, relative to the repository root. */
export const MANIFESTS = ['deploy/kubernetes/result-collection-service.yaml', 'deploy/kubernetes/split/result-collection-service.yaml'];

/** Time a process needs past its shutdown timeout to exit (its last log lines, the kubelet's notice). */
export const EXIT_MARGIN_MS = 2000;

/** The image's USER (node), which the pods must run as. */
export const IMAGE_UID = 1000;

/** One parsed Kubernetes object. */
export interface Manifest {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

// The kinds the manifests use, each with its model (schema) in kubernetes-models.
const MODELS = new Map<string, (data: Manifest) => { validate(): void }>([
  ['v1/ConfigMap', (data) => new ConfigMap(data as never)],
  ['v1/Service', (data) => new Service(data as never)],
  ['apps/v1/Deployment', (data) => new Deployment(data as never)],
  ['policy/v1/PodDisruptionBudget', (data) => new PodDisruptionBudget(data as never)],
]);

/** Parses a multi-document YAML text; a YAML error is thrown with its position. */
export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0) throw new Error(document.errors.map((error) => error.message).join('; '));
    return document.toJS() as Manifest;
  });
}

/** What the Kubernetes API schema refuses in one object (none when it is valid). */
export function schemaFindings(manifest: Manifest): string[] {
  const key = `${manifest.apiVersion ?? '?'}/${manifest.kind ?? '?'}`;
  const model = MODELS.get(key);
  if (model === undefined) return [`${key}: no schema for this kind (not one the manifests use)`];
  try {
    model(manifest).validate();
    return [];
  } catch (error) {
    return [`${key} ${manifest.metadata?.name ?? '?'}: ${(error as Error).message}`];
  }
}

/** A setting's value in a container: its own env, else the ConfigMap it loads, else the service's default. */
function settingMs(name: 'SHUTDOWN_DELAY_MS' | 'SHUTDOWN_TIMEOUT_MS', container: IContainer, config: Record<string, string>): number {
  const own = container.env?.find((variable) => variable.name === name)?.value;
  return Number(own ?? config[name] ?? SETTINGS[name].default);
}

/** The security context in force for a container: its own fields over the pod's. */
function effectiveSecurity(pod: IPodSpec, container: IContainer): ISecurityContext {
  return { ...(pod.securityContext as ISecurityContext | undefined), ...container.securityContext };
}

/** Whether a probe is an HTTP GET of `path` on the port the service listens on. */
function probeFinding(name: string, probe: IContainer['livenessProbe'], path: string, container: IContainer, port: number): string[] {
  const get = probe?.httpGet;
  if (get === undefined) return [`${name}: no httpGet probe`];
  const named = container.ports?.find((entry) => entry.name === get.port)?.containerPort;
  const target = typeof get.port === 'number' ? get.port : named;
  const found: string[] = [];
  if (get.path !== path) found.push(`${name}: path ${String(get.path)}, not ${path}`);
  if (target !== port) found.push(`${name}: port ${String(get.port)} is not the service's PORT ${port}`);
  return found;
}

/**
 * What an operator expects of a Deployment, as findings: liveness on /healthz and readiness on
 * /readyz on the service's PORT, CPU and memory requests and a memory limit, the hardened security
 * context (non-root as the image's uid, read-only root, no privilege escalation, every capability
 * dropped, the RuntimeDefault seccomp profile), a termination grace period above the drain
 * (SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS, as the container gets them, plus {@link EXIT_MARGIN_MS}),
 * and a PodDisruptionBudget selecting its pods.
 */
export function deploymentFindings(deployment: Manifest, all: readonly Manifest[]): string[] {
  const name = `Deployment ${deployment.metadata?.name ?? '?'}`;
  const pod = (deployment as { spec?: { template?: { spec?: IPodSpec; metadata?: { labels?: Record<string, string> } } } }).spec?.template;
  const containers = pod?.spec?.containers ?? [];
  if (pod?.spec === undefined || containers.length === 0) return [`${name}: no pod template with a container`];
  const config = (all.find((manifest) => manifest.kind === 'ConfigMap') as { data?: Record<string, string> } | undefined)?.data ?? {};
  const found: string[] = [];
  for (const container of containers) {
    const at = `${name} container ${container.name}`;
    const port = Number(container.env?.find((variable) => variable.name === 'PORT')?.value ?? config.PORT ?? SETTINGS.PORT.default);
    found.push(...probeFinding(`${at} livenessProbe`, container.livenessProbe, '/healthz', container, port));
    found.push(...probeFinding(`${at} readinessProbe`, container.readinessProbe, '/readyz', container, port));
    const { requests, limits } = container.resources ?? {};
    if (requests?.cpu === undefined || requests.memory === undefined) found.push(`${at}: no CPU and memory requests`);
    if (limits?.memory === undefined) found.push(`${at}: no memory limit`);
    const security = effectiveSecurity(pod.spec, container);
    if (security.runAsNonRoot !== true) found.push(`${at}: runAsNonRoot is not true`);
    if (security.runAsUser !== IMAGE_UID) found.push(`${at}: runAsUser is not the image's uid ${IMAGE_UID}`);
    if (security.readOnlyRootFilesystem !== true) found.push(`${at}: readOnlyRootFilesystem is not true`);
    if (security.allowPrivilegeEscalation !== false) found.push(`${at}: allowPrivilegeEscalation is not false`);
    if (!(security.capabilities?.drop ?? []).includes('ALL')) found.push(`${at}: capabilities do not drop ALL`);
    if (security.seccompProfile?.type !== 'RuntimeDefault') found.push(`${at}: seccompProfile is not RuntimeDefault`);
    const drainMs = settingMs('SHUTDOWN_DELAY_MS', container, config) + settingMs('SHUTDOWN_TIMEOUT_MS', container, config);
    const graceMs = (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    if (graceMs < drainMs + EXIT_MARGIN_MS) {
      found.push(`${at}: terminationGracePeriodSeconds ${graceMs / 1000} s is not above the drain (${drainMs} ms) by ${EXIT_MARGIN_MS} ms`);
    }
  }
  const labels = pod.metadata?.labels ?? {};
  const budget = all.find((manifest) => {
    if (manifest.kind !== 'PodDisruptionBudget') return false;
    const selector = (manifest as { spec?: { selector?: { matchLabels?: Record<string, string> } } }).spec?.selector?.matchLabels;
    return selector !== undefined && Object.entries(selector).every(([key, value]) => labels[key] === value);
  });
  if (budget === undefined) found.push(`${name}: no PodDisruptionBudget selects its pods`);
  return found;
}

/** Every finding of one manifest file's text: schema first, then each Deployment's expectations. */
export function manifestFindings(text: string): string[] {
  const manifests = parseManifests(text).filter((manifest) => manifest !== null);
  const schema = manifests.flatMap((manifest) => schemaFindings(manifest));
  const intent = manifests.filter((manifest) => manifest.kind === 'Deployment').flatMap((deployment) => deploymentFindings(deployment, manifests));
  return [...schema, ...intent];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = join(import.meta.dirname, '..');
  const files = process.argv.length > 2 ? process.argv.slice(2) : MANIFESTS;
  let failed = false;
  for (const file of files) {
    const findings = manifestFindings(readFileSync(resolve(root, file), 'utf8'));
    for (const finding of findings) console.error(`${file}: ${finding}`);
    failed ||= findings.length > 0;
  }
  if (failed) process.exit(1);
  console.error(`Kubernetes manifests valid and hardened: ${files.join(', ')}`);
}
