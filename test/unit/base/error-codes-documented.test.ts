/**
 * docs/api.md's table of error codes is what a client switches on, so it names every code of the
 * service's one union (src/base/errors.ts) with the HTTP status the service answers it with: a
 * code added to the union without a row, or a status changed in one place only, fails here.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { readErrorCodes } from '../../../scripts/client-error-codes.js';
import { httpStatusFor, type ErrorCode } from '../../../src/base/errors.js';

/** The rows of the table under `## Error codes`: each code of its first column, with the row's HTTP column. */
function documentedCodes(markdown: string): Map<string, string> {
  const section = markdown.slice(markdown.indexOf('\n## Error codes\n'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  const rows = new Map<string, string>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 4 || !cells[1]?.startsWith('`')) continue;
    for (const code of cells[1].matchAll(/`([A-Z_]+)`/g)) rows.set(code[1] as string, cells[2] as string);
  }
  return rows;
}

it("names every code of the service's union in docs/api.md, each with the HTTP status it is answered with", () => {
  const codes = readErrorCodes(readFileSync('src/base/errors.ts', 'utf8')).map((entry) => entry.code as ErrorCode);
  const rows = documentedCodes(readFileSync('docs/api.md', 'utf8'));
  expect(codes.length).toBeGreaterThan(30);
  expect(codes.filter((code) => !rows.has(code))).toEqual([]);
  expect([...rows.keys()].filter((code) => !codes.includes(code as ErrorCode))).toEqual([]);
  // "—": a code no HTTP answer carries (internal, or only ever ending a stream or a socket).
  const wrong = codes.filter((code) => rows.get(code) !== '—' && !rows.get(code)?.startsWith(String(httpStatusFor(code))));
  expect(wrong.map((code) => `${code}: documented ${rows.get(code)}, answered ${httpStatusFor(code)}`)).toEqual([]);
});
