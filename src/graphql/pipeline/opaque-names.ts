/**
 * A document's operation and fragment names replaced by names of our own making, for libraries
 * that look definitions up by name in plain objects. graphql-depth-limit (commissioned, unmaintained
 * upstream) keeps a document's operations and fragments in `{}` tables indexed by their names: an
 * operation named `__proto__` sets the table's prototype, and a spread of an undefined fragment
 * named `toString` or `constructor` finds a function of Object.prototype instead of nothing, and the
 * library throws (a 500 for the client). The names a client writes never reach such a library: it
 * gets this copy, whose names are `o0`, `o1`, … and `f0`, `f1`, …, and what it says of a name is
 * said of the original again by {@link OpaqueNames.original}.
 */
import { Kind, visit, type DocumentNode } from 'graphql';

/** A document with names of our own making, and the way back to the client's names. */
export interface OpaqueNames {
  readonly document: DocumentNode;
  /** The client's name of an operation or fragment renamed `opaque` (the opaque name itself when it is none). */
  original(opaque: string): string;
}

/**
 * The copy of `document` with opaque operation and fragment names, or undefined when a spread names
 * a fragment the document does not define (graphql-js's KnownFragmentNames rule refuses it, and no
 * library need measure it).
 */
export function withOpaqueNames(document: DocumentNode): OpaqueNames | undefined {
  const fragments = new Map<string, string>();
  const back = new Map<string, string>();
  let operations = 0;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION || fragments.has(definition.name.value)) continue;
    const opaque = `f${fragments.size}`;
    fragments.set(definition.name.value, opaque);
    back.set(opaque, definition.name.value);
  }
  let unknown = false;
  const renamed = visit(document, {
    OperationDefinition(node) {
      if (node.name === undefined) return undefined;
      const opaque = `o${operations++}`;
      back.set(opaque, node.name.value);
      return { ...node, name: { ...node.name, value: opaque } };
    },
    FragmentDefinition(node) {
      return { ...node, name: { ...node.name, value: fragments.get(node.name.value) ?? node.name.value } };
    },
    FragmentSpread(node) {
      const opaque = fragments.get(node.name.value);
      if (opaque === undefined) unknown = true;
      return { ...node, name: { ...node.name, value: opaque ?? node.name.value } };
    },
  });
  if (unknown) return undefined;
  return { document: renamed, original: (opaque) => back.get(opaque) ?? opaque };
}
