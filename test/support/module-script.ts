/**
 * Runs a TypeScript module given as text in a Node process of its own, from the repository's root
 * (so `./src/...` imports resolve): for what one test process cannot show, such as which of
 * kafkajs's modules a set of imports replaces, or the heap a structure takes with nothing else
 * loaded. Answers what the process printed; rejects when it fails or runs past `timeoutMs`.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** The repository's root: where the script runs. */
const root = join(import.meta.dirname, '..', '..');

/** Options of {@link runModuleScript}. */
export interface ModuleScriptOptions {
  /** Node's flags before the script (`--expose-gc`, `--allow-natives-syntax`). */
  readonly flags?: readonly string[];
  /** Default 30 s. */
  readonly timeoutMs?: number;
}

/** Runs `script` (an ES module, TypeScript allowed) and answers its standard output and error. */
export function runModuleScript(script: string, options: ModuleScriptOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const args = [...(options.flags ?? []), '--import', 'tsx', '--input-type=module', '-e', script];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: root, timeout: options.timeoutMs ?? 30_000, encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}
