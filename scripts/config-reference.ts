/**
 * Writes docs/configuration.md from the settings' declarations (src/config/settings.ts), so the
 * reference cannot drift from what the code reads. `--check` writes nothing and fails when the
 * committed page is stale (the test script runs it).
 *
 *   npm run config:docs            # regenerate
 *   npx tsx scripts/config-reference.ts --check
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SECTIONS, SETTINGS, type Setting } from '../src/config/settings.js';

const PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** The page's Markdown. */
export function renderConfigurationReference(): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from src/config/settings.ts by `npm run config:docs`; edit the declarations, not this page. -->',
    '',
    'Environment variables, all optional. A bad value stops startup with a message naming the variable',
    '(exit code 78). `NODE_ENV=production` changes the defaults marked so.',
    '',
  ];
  const entries = Object.entries(SETTINGS) as Array<[string, Setting]>;
  for (const [section, title] of Object.entries(SECTIONS)) {
    const inSection = entries.filter(([, setting]) => setting.section === section);
    if (inSection.length === 0) continue;
    lines.push(`## ${title}`, '', '| Variable | Type | Default | Meaning |', '|---|---|---|---|');
    for (const [name, setting] of inSection) lines.push(`| \`${name}\` | ${setting.type} | ${defaultOf(setting)} | ${setting.description} |`);
    lines.push('');
  }
  return lines.join('\n');
}

function defaultOf(setting: Setting): string {
  if (setting.defaultNote !== undefined) return setting.defaultNote;
  return `\`${String(setting.default)}\``;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = renderConfigurationReference();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(PAGE, 'utf8');
    } catch {
      // Missing: stale.
    }
    if (committed !== page) {
      process.stderr.write('docs/configuration.md is stale: run `npm run config:docs` and commit the result\n');
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, page);
  }
}
