/**
 * Evaluated just before oidc-provider (see oidc-provider.ts): holds back the one line it prints at
 * import, `oidc-provider WARNING: Unsupported runtime`, when the running Node.js is a release of an
 * LTS line (an even major from 22 on).
 *
 * Why: oidc-provider decides by `process.release.lts`, the label a build carries only from the
 * line's promotion to LTS on. The project ships the newest Node 26 the npm registry carries
 * (.node-version), which was built before that promotion, so the label is absent although the
 * line is the Active LTS one. On anything else (Node 20, an odd line, Deno, Bun) the warning
 * still prints. Every other console line passes through untouched, and the console is restored as
 * soon as oidc-provider has been evaluated.
 */
const NOTICE = 'oidc-provider WARNING: Unsupported runtime';

/** Whether `version` (process.versions.node) is a release of a Node.js LTS line. */
export function isLtsLine(version: string): boolean {
  const major = Number(version.split('.')[0]);
  return Number.isInteger(major) && major >= 22 && major % 2 === 0;
}

const original = console.warn;
const active = typeof process !== 'undefined' && process.release?.name === 'node' && isLtsLine(process.versions.node);
if (active) {
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith(NOTICE)) return;
    original(...args);
  };
}

/** Puts the console back as it was; oidc-provider.ts calls it once the library is evaluated. */
export function restoreConsoleWarn(): void {
  if (active) console.warn = original;
}
