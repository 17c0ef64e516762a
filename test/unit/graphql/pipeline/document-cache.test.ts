/**
 * The document caches count what a parsed document really holds (its text and every token, the
 * comments' included), so their byte budgets bound the heap: checked against the heap itself, for
 * ordinary documents and for documents padded with comments, and the budget holds as documents come.
 */
import { parse, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentCache, documentBytes } from '../../../../src/graphql/pipeline/document-cache.js';

const heap = () => {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage().heapUsed;
};

/** Heap taken by `count` documents made by `make`, and what documentBytes counts for them. */
function measure(count: number, make: (i: number) => string): { held: number; counted: number } {
  const before = heap();
  // The texts too: a document keeps its text, and the text is what a request brings.
  const documents: DocumentNode[] = Array.from({ length: count }, (_, i) => parse(make(i), { maxTokens: 1000 }));
  const held = heap() - before;
  const counted = documents.reduce((sum, document) => sum + documentBytes(document), 0);
  expect(documents.length).toBe(count);
  return { held, counted };
}

describe('documentBytes', () => {
  it('counts at least what ordinary documents hold on the heap', () => {
    const { held, counted } = measure(
      2000,
      (i) => `query Q${i}($id: ID!) { test(correlationId: $id) { correlationId status messages(first: ${i}) { nodes { sequence payload } } } }`,
    );
    console.log(`ordinary documents: held ${held} bytes, counted ${counted}`);
    expect(held).toBeLessThan(counted * 1.1);
  });

  it('counts the text and tokens of comments, which an AST leaves out', () => {
    const { held, counted } = measure(200, (i) => `${'# padding padding padding\n'.repeat(2000)}query Q${i} { __typename }`);
    console.log(`commented documents: held ${held} bytes, counted ${counted}`);
    expect(held).toBeLessThan(counted * 1.1);
    expect(counted).toBeGreaterThan(200 * 2000 * 26);
  });
});

describe('the document caches', () => {
  it('keep at most their byte budget, least recently used dropped first, and never one larger than all of it', () => {
    const cache = createDocumentCache(1024 * 1024);
    const text = (i: number) => `# ${'x'.repeat(100_000)}\nquery Q${i} { __typename }`;
    for (let i = 0; i < 50; i++) cache.set(text(i), parse(text(i)));
    expect(cache.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.get(text(49))).toBeDefined();
    expect(cache.get(text(0))).toBeUndefined();
    const huge = `# ${'x'.repeat(600_000)}\n{ __typename }`;
    cache.set(huge, parse(huge));
    expect(cache.get(huge)).toBeUndefined();
  });

  it('keep nothing with a budget of 0', async () => {
    const cache = createDocumentCache(0);
    cache.set('{ __typename }', parse('{ __typename }'));
    expect(cache.get('{ __typename }')).toBeUndefined();
  });
});
