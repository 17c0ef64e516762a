/**
 * The runtime-dependency check (scripts/check-runtime-deps.ts) over a made-up application folder:
 * it fails on a runtime import of a package `npm ci --omit=dev` does not install (a dev dependency),
 * and passes when every bare import is installed. The built image's own `/app` is checked in
 * image.test.ts.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bareImports, missingRuntimeImports, packageName } from '../../scripts/check-runtime-deps.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** An application folder with `files` under dist/ and `installed` packages in node_modules/. */
async function app(files: Record<string, string>, installed: readonly string[]): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'runtime-deps-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, 'dist', path, '..'), { recursive: true });
    await writeFile(join(dir, 'dist', path), text);
  }
  for (const name of installed) {
    await mkdir(join(dir, 'node_modules', name), { recursive: true });
    await writeFile(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name }));
  }
  return dir;
}

describe('check-runtime-deps', () => {
  it('fails on a runtime import of a dev dependency absent from node_modules', async () => {
    const root = await app(
      {
        'app/main.js': "import { createServer } from 'node:http';\nimport express from 'express';\nimport './local.js';\n",
        'app/local.js': "export const t = await import('vitest');\nexport * from '@graphql-tools/schema';\n",
        // The browser bundles served as files: Node never imports them.
        [['web', 'page.js'].join('/')]: "import 'some-module';\n",
      },
      ['express', '@graphql-tools/schema'],
    );
    expect(missingRuntimeImports(root)).toEqual([{ file: join('dist', 'app', 'local.js'), specifier: 'vitest' }]);
  });

  it('passes when every bare import, subpaths and scoped packages included, is installed', async () => {
    const root = await app({ 'main.js': "import 'fs';\nimport { useServer } from 'graphql-ws/use/ws';\nimport x from '@scope/pkg/sub';\n" }, [
      'graphql-ws',
      '@scope/pkg',
    ]);
    expect(missingRuntimeImports(root)).toEqual([]);
  });

  it('reads static, re-export, side-effect and dynamic imports, and names packages without subpaths', () => {
    expect(
      bareImports("import a from 'a';\nexport { b } from \"b/x\";\nimport 'c';\nawait import('d');\nimport e from './e.js';\nimport f from 'node:fs';"),
    ).toEqual(['a', 'b/x', 'c', 'd']);
    expect([packageName('@s/p/sub/path'), packageName('p/sub'), packageName('p')]).toEqual(['@s/p', 'p', 'p']);
  });
});
