/**
 * Writes the client library's error codes (packages/client/src/service-error-codes.ts) from the
 * service's one code union (`ErrorCode` in src/base/errors.ts), with each code's comment, so the
 * library never holds a code the service does not send nor misses one it does. `--check` writes
 * nothing and fails when the committed file is stale (the test script runs it).
 *
 *   npm run codegen:client-errors   # regenerate
 *   npx tsx scripts/client-error-codes.ts --check
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import ts from 'typescript';

const SOURCE = fileURLToPath(new URL('../src/base/errors.ts', import.meta.url));
const TARGET = fileURLToPath(new URL('../packages/client/src/service-error-codes.ts', import.meta.url));

/** One member of the union: its string and the comment above it, if any. */
interface CodeEntry {
  readonly code: string;
  readonly doc: string | undefined;
}

/** The members of the `ErrorCode` union declared in `source` (the text of src/base/errors.ts), in order. */
export function readErrorCodes(source: string): CodeEntry[] {
  const file = ts.createSourceFile('errors.ts', source, ts.ScriptTarget.ES2022, true);
  const alias = file.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'ErrorCode');
  if (alias === undefined || !ts.isUnionTypeNode(alias.type)) throw new Error('src/base/errors.ts declares no `type ErrorCode = ... | ...` union');
  const members = alias.type.types;
  return members.map((member, i) => {
    if (!ts.isLiteralTypeNode(member) || !ts.isStringLiteral(member.literal))
      throw new Error(`ErrorCode has a member that is not a string: ${member.getText(file)}`);
    // A member's comment sits before its `|`, between the previous member and this one.
    const between = source.slice(i === 0 ? alias.type.pos : (members[i - 1]?.end ?? 0), member.getStart(file));
    const docs = between.match(/\/\*\*[\s\S]*?\*\//g) ?? [];
    return { code: member.literal.text, doc: docs.at(-1) };
  });
}

/** The generated module's text for `entries`. */
export async function renderClientErrorCodes(entries: readonly CodeEntry[]): Promise<string> {
  const lines = [
    '// Generated from the ErrorCode union of src/base/errors.ts by scripts/client-error-codes.ts',
    '// (`npm run codegen:client-errors`); edit the union, not this file.',
    '',
    "/** The service's stable error codes (`extensions.code` of its GraphQL errors): a follow that fails on one reports it. */",
    'export type ServiceErrorCode =',
  ];
  for (const { code, doc } of entries) {
    if (doc !== undefined) lines.push(...doc.split('\n').map((line) => `  ${line.trim().startsWith('*') ? ` ${line.trim()}` : line.trim()}`));
    lines.push(`  | '${code}'`);
  }
  lines[lines.length - 1] += ';';
  lines.push(
    '',
    '/** Every {@link ServiceErrorCode}, in the order the service declares them. */',
    `export const SERVICE_ERROR_CODES: readonly ServiceErrorCode[] = [${entries.map(({ code }) => `'${code}'`).join(', ')}];`,
    '',
  );
  // Formatted as the repository's files are, so the formatting check and this one agree.
  return format(lines.join('\n'), { ...(await resolveConfig(TARGET)), filepath: TARGET });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await renderClientErrorCodes(readErrorCodes(readFileSync(SOURCE, 'utf8')));
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(TARGET, 'utf8');
    } catch {
      // Missing: stale.
    }
    if (committed !== text) {
      process.stderr.write('packages/client/src/service-error-codes.ts is stale: run `npm run codegen:client-errors` and commit the result\n');
      process.exit(1);
    }
  } else {
    writeFileSync(TARGET, text);
  }
}
