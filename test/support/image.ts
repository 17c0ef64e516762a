/**
 * The service's image as an operator runs it (test/deploy/image.test.ts): built by
 * scripts/build-image.sh, then its `CMD` started as its `USER` from its own filesystem: in a container
 * where the engine can run one (`docker run`/`podman run`, read-only), otherwise from the image's
 * mounted filesystem (`podman image mount`) under `chroot --userspec` in a private mount namespace,
 * its root remounted read-only (as `readOnlyRootFilesystem` leaves it) with /proc and /dev bound in.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of an image's configuration a start reads. */
export interface ImageConfig {
  readonly User: string;
  readonly Env: readonly string[];
  readonly Cmd: readonly string[];
  readonly WorkingDir: string;
}

/** The engine the machine has: docker with a daemon that answers, else podman. */
export function engine(): 'docker' | 'podman' {
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 }).status === 0 ? 'docker' : 'podman';
}

/** Builds the image with scripts/build-image.sh (cheap when its layers are cached); its name. */
export function buildImage(): string {
  return execFileSync('bash', ['scripts/build-image.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 }).trim();
}

/** The image's configuration as the engine reports it. */
export function imageConfig(image: string): ImageConfig {
  return JSON.parse(execFileSync(engine(), ['image', 'inspect', '--format', '{{json .Config}}', image], { encoding: 'utf8' })) as ImageConfig;
}

/** The image's size and its base's, in bytes. */
export function imageSize(image: string): number {
  return Number(execFileSync(engine(), ['image', 'inspect', '--format', '{{.Size}}', image], { encoding: 'utf8' }).trim());
}

/** Whether the engine can start a container here (crun cannot where setrlimit is refused). */
export function canRunContainers(image: string): boolean {
  return spawnSync(engine(), ['run', '--rm', '--network', 'host', image, 'node', '-e', '0'], { stdio: 'ignore', timeout: 60_000 }).status === 0;
}

/** The image's filesystem mounted on the host (podman), and its release. */
export interface MountedImage {
  readonly root: string;
  unmount(): void;
}

/** Mounts the image's filesystem read-only on the host (podman, root). */
export function mountImage(image: string): MountedImage {
  const root = execFileSync('podman', ['image', 'mount', image], { encoding: 'utf8' }).trim();
  return { root, unmount: () => execFileSync('podman', ['image', 'unmount', image], { stdio: 'ignore' }) };
}

/** `name` (a user name or uid, `user[:group]`) as uid and gid, read from the image's own /etc/passwd. */
export function resolveUser(root: string, name: string): { uid: number; gid: number } {
  const [user = ''] = name.split(':');
  for (const line of readFileSync(join(root, 'etc/passwd'), 'utf8').split('\n')) {
    const [login, , uid, gid] = line.split(':');
    if (login === user || uid === user) return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error(`the image has no user ${name}`);
}

/** A started image. */
export interface BootedImage {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
}

/** What a start needs: the image, its configuration, settings over its `Env`, and a folder bound read-only at /run (as a secret volume). */
export interface BootOptions {
  readonly image: string;
  readonly config: ImageConfig;
  readonly env: Record<string, string>;
  readonly secrets: string;
  /** The mounted filesystem, when the engine cannot run containers. */
  readonly mounted?: MountedImage;
}

/** Starts the image's `CMD` as its `USER`, its root read-only. */
export function bootImage(options: BootOptions): BootedImage {
  const { config, env, secrets } = options;
  const settings = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  let child: ChildProcess;
  if (options.mounted === undefined) {
    const eng = engine();
    const flags = settings.flatMap((s) => ['-e', s]);
    child = spawn(eng, ['run', '--rm', '--read-only', '--network', 'host', '--cap-drop', 'ALL', '-v', `${secrets}:/run:ro`, ...flags, options.image], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } else {
    const root = options.mounted.root;
    const { uid, gid } = resolveUser(root, config.User);
    // The root is bound onto itself so that remounting it read-only touches this namespace's view only.
    const script = [
      'set -e',
      'mount --bind "$R" "$R"',
      'mount -o remount,bind,ro "$R"',
      // Even root cannot write there now: the service runs as readOnlyRootFilesystem leaves it.
      'if touch "$R/.written" 2>/dev/null; then echo "the image root is writable" >&2; exit 70; fi',
      'mount -t proc proc "$R/proc"',
      'mount --rbind /dev "$R/dev"',
      'mount --bind -o ro "$S" "$R/run"',
      'exec chroot --userspec="$U" "$R" /usr/bin/env -i -C "$W" "$@"',
    ].join('\n');
    child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'boot', ...config.Env, ...settings, ...config.Cmd], {
      env: { ...process.env, R: root, S: secrets, U: `${uid}:${gid}`, W: config.WorkingDir || '/' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

/** The smallest `terminationGracePeriodSeconds` the Kubernetes manifests give, and the ConfigMap's shutdown settings. */
export function manifestShutdown(files: readonly string[]): { graceSeconds: number; env: Record<string, string> } {
  const graces: number[] = [];
  const env: Record<string, string> = {};
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/terminationGracePeriodSeconds:\s*(\d+)/g)) graces.push(Number(match[1]));
    for (const match of text.matchAll(/^\s+(SHUTDOWN_(?:TIMEOUT|DELAY)_MS):\s*"?(\d+)"?/gm)) env[match[1] as string] = match[2] as string;
  }
  if (graces.length === 0) throw new Error(`no terminationGracePeriodSeconds in ${files.join(', ')}`);
  return { graceSeconds: Math.min(...graces), env };
}

/** Every package under `nodeModules`, nested ones included, as `name@version` from its own package.json. */
export function installedPackages(nodeModules: string): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith('.')) continue;
      for (const name of entry.startsWith('@') ? readdirSync(join(dir, entry)).map((inner) => `${entry}/${inner}`) : [entry]) {
        const manifest = JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')) as { name: string; version: string };
        found.add(`${manifest.name}@${manifest.version}`);
        walk(join(dir, name, 'node_modules'));
      }
    }
  };
  walk(nodeModules);
  return found;
}
