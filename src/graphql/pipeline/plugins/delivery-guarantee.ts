/**
 * The delivery guarantee a subscription asks for in its `extensions`
 * (`{ "deliveryGuarantee": "at-least-once" }`) or, for a client whose gateway does not forward a
 * request's extensions, in the `deliveryGuarantee` argument of `testMessages` (`AT_LEAST_ONCE`),
 * checked where the lifecycle admits it: a guarantee
 * this service does not know is refused with DELIVERY_GUARANTEE_UNSUPPORTED, one it cannot keep
 * for this operation with DELIVERY_GUARANTEE_UNSATISFIABLE (a `testChanges` subscription replays
 * nothing, so it cannot resume what a client missed), rather than served without it. What was
 * granted is confirmed on the subscription's first push (`graphql/fanout/delivery-notes.ts`); what each
 * guarantee promises, per transport and store, is docs/delivery.md.
 */
import { getOperationAST, Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { ServiceError } from '../../../base/errors.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** The guarantees a subscription may ask for. */
export const DELIVERY_GUARANTEES = ['at-least-once', 'at-most-once'] as const;
export type DeliveryGuarantee = (typeof DELIVERY_GUARANTEES)[number];

/** The guarantee `extensions` ask for: undefined when none is asked for, the text as sent otherwise. */
export function requestedGuarantee(extensions: Record<string, unknown> | null | undefined): unknown {
  return extensions?.deliveryGuarantee;
}

/**
 * The guarantee the `deliveryGuarantee` argument of the operation's `testMessages` asks for, in the
 * extensions' spelling (`AT_LEAST_ONCE` is `at-least-once`); undefined when no root field has one.
 */
export function argumentGuarantee(
  operation: OperationDefinitionNode | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): unknown {
  for (const selection of operation?.selectionSet.selections ?? []) {
    if (selection.kind !== Kind.FIELD || selection.name.value !== 'testMessages') continue;
    const value = selection.arguments?.find((argument) => argument.name.value === 'deliveryGuarantee')?.value;
    const asked = value?.kind === Kind.ENUM ? value.value : value?.kind === Kind.VARIABLE ? variables?.[value.name.value] : undefined;
    if (typeof asked === 'string') return asked.toLowerCase().replaceAll('_', '-');
  }
  return undefined;
}

/**
 * The guarantee a subscription asks for, in its extensions or its arguments (the extensions' when
 * both ask, the lifecycle refusing two that differ).
 */
export function askedGuarantee(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  extensions: Record<string, unknown> | null | undefined,
): unknown {
  const asked = requestedGuarantee(extensions);
  return asked ?? argumentGuarantee(getOperationAST(document, operationName), variables);
}

/** The delivery-guarantee rule as a plugin. */
export function deliveryGuaranteePlugin(): OperationPlugin {
  return {
    name: 'delivery-guarantee',
    onAdmit({ operation, extensions, variables }) {
      if (operation == null || operation.operation !== 'subscription') return undefined;
      const inArguments = argumentGuarantee(operation, variables);
      const asked = requestedGuarantee(extensions) ?? inArguments;
      if (asked === undefined || asked === null) return undefined;
      if (inArguments !== undefined && asked !== inArguments) {
        return new ServiceError(
          'BAD_USER_INPUT',
          `Two delivery guarantees asked for: ${JSON.stringify(asked)} in the extensions and ${JSON.stringify(inArguments)} in the arguments; ask for one.`,
          { details: { argument: 'deliveryGuarantee' } },
        );
      }
      if (!DELIVERY_GUARANTEES.includes(asked as DeliveryGuarantee)) {
        return new ServiceError(
          'DELIVERY_GUARANTEE_UNSUPPORTED',
          `Unknown delivery guarantee ${JSON.stringify(asked)}: ask for one of ${DELIVERY_GUARANTEES.join(', ')}.`,
          {
            details: { supported: DELIVERY_GUARANTEES.join(', ') },
          },
        );
      }
      if (asked === 'at-least-once' && !resumable(operation)) {
        return new ServiceError(
          'DELIVERY_GUARANTEE_UNSATISFIABLE',
          'At-least-once delivery needs a subscription that can resume from a cursor (testMessages); testChanges replays nothing.',
        );
      }
      return undefined;
    },
  };
}

/** Whether every root field of the subscription resumes from a cursor (`testMessages`). */
function resumable(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.every((selection) => selection.kind === Kind.FIELD && selection.name.value === 'testMessages');
}
