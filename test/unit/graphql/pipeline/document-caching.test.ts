/**
 * The document-caching plugin: the parse and validate phases answer a text seen before with the
 * document parsed then and its errors, so equal texts share one document and are validated once;
 * a text that does not parse is never kept, and a budget of 0 keeps nothing.
 */
import { buildSchema, GraphQLError, parse, type DocumentNode, type ValidationRule } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createOperationLifecycle } from '../../../../src/graphql/pipeline/operation-lifecycle.js';
import type { OperationPlugin } from '../../../../src/graphql/pipeline/operation-plugin.js';
import { documentCachingPlugin } from '../../../../src/graphql/pipeline/plugins/document-caching.js';
import { testPrincipal } from '../../../support/principal.js';

const schema = buildSchema('type Query { a: Int }');
const principal = testPrincipal();

/** A lifecycle over `caching` and a rule that counts the documents it validates. */
function counted(caching: OperationPlugin) {
  const validations: DocumentNode[] = [];
  const counting: ValidationRule = (context) => (validations.push(context.getDocument()), {});
  const lifecycle = createOperationLifecycle({
    schema,
    plugins: [caching, { name: 'counting', validationRules: [counting] }],
    createContext: () => ({}),
    observerFailed: (plugin, hook, error) => {
      throw new Error(`${plugin} ${hook} failed: ${String(error)}`);
    },
  });
  const prepare = async (query: string) => lifecycle.prepare({ principal, transport: 'websocket', params: { query } });
  return { lifecycle, validations, prepare };
}

describe('the document-caching plugin', () => {
  it('answers a text seen before with its document and its errors, so equal texts share one document, validated once', async () => {
    const { validations, prepare } = counted(documentCachingPlugin());
    const first = await prepare('{ a }');
    const again = await prepare('{ a }');
    if (Array.isArray(first) || Array.isArray(again)) throw new Error('expected prepared operations');
    expect(again.document).toBe(first.document);
    expect(validations).toEqual([first.document]);
    // An invalid document's errors are kept too: the same errors, not validated again.
    const invalid = await prepare('{ b }');
    expect(invalid).toMatchObject([{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    expect(await prepare('{ b }')).toEqual(invalid);
    expect(validations).toHaveLength(2);
  });

  it('never keeps a text that does not parse', () => {
    const plugin = documentCachingPlugin();
    const failure = new GraphQLError('Syntax Error');
    const failed = plugin.onParse?.('{ a');
    expect(failed?.done).toBeTypeOf('function');
    failed?.done?.(failure);
    expect(plugin.onParse?.('{ a')?.kept).toBeUndefined();
    const document = parse('{ a }');
    const first = plugin.onParse?.('{ a }');
    expect(first?.kept).toBeUndefined();
    first?.done?.(document);
    expect(plugin.onParse?.('{ a }')?.kept).toBe(document);
  });

  it('keeps nothing with a budget of 0: each operation parsed and validated on its own', async () => {
    const { validations, prepare } = counted(documentCachingPlugin(0));
    const first = await prepare('{ a }');
    const again = await prepare('{ a }');
    if (Array.isArray(first) || Array.isArray(again)) throw new Error('expected prepared operations');
    expect(again.document).not.toBe(first.document);
    expect(validations).toHaveLength(2);
  });
});
