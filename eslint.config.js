/**
 * Lint rules of the repository (`npm run lint`, also run by scripts/test.sh). Structure and bugs
 * only: formatting is Prettier's (`.prettierrc.json`, print width 160; `npm run format` applies it,
 * `npm run lint` checks it). Import boundaries between folders are in .dependency-cruiser.cjs.
 */
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'node_modules/',
      'dist/',
      '.cache/',
      'coverage/',
      'bench/results/',
      'src/graphql/schema/generated/',
      'web/dashboard/gql/',
      'packages/client/src/gql/',
      'packages/client/dist/',
    ],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      // Type information for the two promise rules below (the rest of the rules do without it).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits or handles loses its rejection: every background task is either
      // awaited, marked `void` on purpose, or given a .catch.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a callback's result is ignored (an event listener, forEach)
      // rejects into nowhere.
      '@typescript-eslint/no-misused-promises': 'error',
      // `_name` marks a parameter a signature requires (Express error handlers take four) or a
      // property left out of a rest spread on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Closures created before the value they read exists (declare, pass a callback, assign) are
      // a deliberate pattern here; `const` cannot express them.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config/config.ts'],
    rules: {
      // Only src/config/config.ts reads the environment (typed, validated, errors name the variable).
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config/config.ts reads process.env: add a typed, validated field to Config instead.' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:process', importNames: ['env'], message: 'Only src/config/config.ts reads the environment: add a field to Config instead.' },
            { name: 'process', importNames: ['env'], message: 'Only src/config/config.ts reads the environment: add a field to Config instead.' },
          ],
        },
      ],
    },
  },
  {
    // Rooms a newcomer can read: no file of src/ over 300 lines and no function (a factory's
    // closure included) over 150. The settings table is one list, read row by row.
    files: ['src/**/*.ts'],
    ignores: ['src/config/settings.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 150, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  {
    // Tests read loosely typed JSON answers (GraphQL responses, token claims) field by field.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['eslint.config.js', '.dependency-cruiser.cjs'],
    extends: [js.configs.recommended],
  },
  {
    files: ['.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
