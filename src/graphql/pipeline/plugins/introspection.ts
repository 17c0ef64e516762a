/**
 * What a caller may learn of the schema itself: introspection follows its switch (GraphQL IDEs
 * need it), and a federated subgraph's `_service { sdl }`, which reveals the whole schema, follows
 * it too; with trusted documents both federation fields are refused, since a gateway's query plans
 * are documents no manifest lists (see docs/api.md, "Federation").
 *
 * graphql-js's rule rather than Apollo's `introspection: false`: that one adds a rule on HTTP
 * alone, worded for Apollo Server's configuration; this one is the same on every transport.
 */
import { NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import { ServiceError } from '../../../base/errors.js';
import type { OperationPlugin } from '../operation-plugin.js';
import { refusalError } from '../refusal-error.js';

/** Options of {@link introspectionPlugin}. */
export interface IntrospectionOptions {
  /** Whether the schema may be introspected; also governs a subgraph's `_service`. */
  readonly introspection: boolean;
  /** Trusted documents are on: a federated subgraph then refuses `_entities` and `_service`. */
  readonly trustedDocuments: boolean;
}

/** The introspection switch and the federation fields it governs, as validation rules. */
export function introspectionPlugin(options: IntrospectionOptions): OperationPlugin {
  return {
    name: 'introspection',
    validationRules: [...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule]), ...federationFieldsRules(options)],
  };
}

/** The subgraph fields a configuration refuses; without `FEDERATION=on` the schema has neither field and the rule never reports. */
function federationFieldsRules(options: IntrospectionOptions): ValidationRule[] {
  const refusedFields = new Map<string, string>();
  if (options.trustedDocuments) {
    const message =
      "Only trusted documents run here, and a federation gateway's query plans are not among them: this subgraph serves no gateway while GRAPHQL_TRUSTED_DOCUMENTS is set.";
    refusedFields.set('_entities', message).set('_service', message);
  } else if (!options.introspection) {
    refusedFields.set('_service', 'GraphQL introspection has been disabled, and "_service" reveals the schema as introspection does.');
  }
  if (refusedFields.size === 0) return [];
  const rule: ValidationRule = (context) => ({
    Field(node) {
      const message = refusedFields.get(node.name.value);
      // Fragments included: the parent type is Query wherever the field is selected from it. A
      // schema without the field (FEDERATION off) leaves the refusal to graphql-js's own rule.
      const query = context.getSchema().getQueryType();
      if (message === undefined || query == null || context.getParentType() !== query || query.getFields()[node.name.value] === undefined) return;
      context.reportError(refusalError(new ServiceError('GRAPHQL_VALIDATION_FAILED', message), { nodes: [node] }));
    },
  });
  return [rule];
}
