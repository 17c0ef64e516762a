/**
 * The delivery guarantee a subscription asks for in its `extensions`
 * (`{ "deliveryGuarantee": "at-least-once" }`), checked where the lifecycle admits it: a guarantee
 * this service does not know is refused with DELIVERY_GUARANTEE_UNSUPPORTED, one it cannot keep
 * for this operation with DELIVERY_GUARANTEE_UNSATISFIABLE (a `testChanges` subscription replays
 * nothing, so it cannot resume what a client missed), rather than served without it. What was
 * granted is confirmed on the subscription's first push (`graphql/fanout/delivery-notes.ts`); what each
 * guarantee promises, per transport and store, is docs/delivery.md.
 */
import { Kind, type OperationDefinitionNode } from 'graphql';
import { ServiceError } from '../../../base/errors.js';
import type { OperationPlugin } from '../operation-plugin.js';

/** The guarantees a subscription may ask for. */
export const DELIVERY_GUARANTEES = ['at-least-once', 'at-most-once'] as const;
export type DeliveryGuarantee = (typeof DELIVERY_GUARANTEES)[number];

/** The guarantee `extensions` ask for: undefined when none is asked for, the text as sent otherwise. */
export function requestedGuarantee(extensions: Record<string, unknown> | null | undefined): unknown {
  return extensions?.deliveryGuarantee;
}

/** The delivery-guarantee rule as a plugin. */
export function deliveryGuaranteePlugin(): OperationPlugin {
  return {
    name: 'delivery-guarantee',
    onAdmit({ operation, extensions }) {
      const asked = requestedGuarantee(extensions);
      if (asked === undefined || asked === null || operation == null || operation.operation !== 'subscription') return undefined;
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
