/**
 * The plugins' observers of one operation or one event, composed as one. Each plugin's hook and
 * each of its observer's calls runs on its own: one that throws is reported (with the plugin's
 * name) and dropped, and neither stops the others nor the operation or push it follows (a tracing
 * span left open by a neighbour's failure, a response sent and then failed, would be worse than a
 * missing observation).
 */
import type { ExecutionResult } from 'graphql';
import type { Arrival, ArrivingOperation, EventObserver, ExecutionHooks, OperationPlugin, OperationToExecute } from './operation-plugin.js';

/** Told of a plugin hook that threw: the plugin, the hook, the error. */
export type ObserverFailure = (plugin: string, hook: string, error: unknown) => void;

type Named<T> = { readonly plugin: string; readonly observer: T };

/** Calls `call` on each observer, reporting (and dropping) any that throws. */
function each<T>(observers: Array<Named<T>>, hook: string, failed: ObserverFailure, call: (observer: T) => void): void {
  for (let i = 0; i < observers.length; i++) {
    const named = observers[i] as Named<T>;
    try {
      call(named.observer);
    } catch (error) {
      failed(named.plugin, hook, error);
      observers.splice(i--, 1);
    }
  }
}

/** The `arrive` step over the plugins that hook it: the first answer wins. One that throws is reported and passed over. */
export function composeArrivals(plugins: readonly OperationPlugin[], failed: ObserverFailure): (operation: ArrivingOperation) => Arrival {
  const hooks = plugins.flatMap((plugin) => (plugin.arrive ? [{ plugin: plugin.name, arrive: plugin.arrive.bind(plugin) }] : []));
  return (operation) => {
    for (const hook of hooks) {
      try {
        const answer = hook.arrive(operation);
        if (answer !== undefined) return answer;
      } catch (error) {
        failed(hook.plugin, 'arrive', error);
      }
    }
    return undefined;
  };
}

/**
 * The `onExecute` step over the plugins that hook it: the hooks each returned, to run on the result
 * in order, each `onExecuteDone` on the previous one's answer, then every `onResult` on the last
 * answer (a hook that throws is reported and skipped); none (no allocation) when no plugin follows
 * the operation.
 */
export function composeExecutions(
  plugins: readonly OperationPlugin[],
  failed: ObserverFailure,
): (operation: OperationToExecute) => ((result: ExecutionResult) => ExecutionResult) | undefined {
  const hooks = plugins.flatMap((plugin) => (plugin.onExecute ? [{ plugin: plugin.name, onExecute: plugin.onExecute.bind(plugin) }] : []));
  return (operation) => {
    let followers: Array<Named<ExecutionHooks>> | undefined;
    for (const hook of hooks) {
      try {
        const followed = hook.onExecute(operation);
        if (followed !== undefined) (followers ??= []).push({ plugin: hook.plugin, observer: followed });
      } catch (error) {
        failed(hook.plugin, 'onExecute', error);
      }
    }
    if (followers === undefined) return undefined;
    const all = followers;
    return (result) => {
      let current = result;
      each(all, 'onExecuteDone', failed, (observer) => {
        current = observer.onExecuteDone?.(current) ?? current;
      });
      const sent = current;
      each(all, 'onResult', failed, (observer) => observer.onResult?.(sent));
      return sent;
    };
  };
}

/** The `onEvent` hooks as one; undefined (no allocation) when no plugin follows the event, the common case. */
export function composeEventObservers(plugins: readonly OperationPlugin[], failed: ObserverFailure): (event: unknown) => EventObserver | undefined {
  const hooks = plugins.flatMap((plugin) => (plugin.onEvent ? [{ plugin: plugin.name, onEvent: plugin.onEvent.bind(plugin) }] : []));
  return (event) => {
    let observers: Array<Named<EventObserver>> | undefined;
    for (const hook of hooks) {
      let observer: EventObserver | undefined;
      try {
        observer = hook.onEvent(event);
      } catch (error) {
        failed(hook.plugin, 'onEvent', error);
        continue;
      }
      if (observer !== undefined) (observers ??= []).push({ plugin: hook.plugin, observer });
    }
    if (observers === undefined) return undefined;
    const all = observers;
    return {
      reached: () => each(all, 'reached', failed, (observer) => observer.reached()),
      end: () => each(all, 'end', failed, (observer) => observer.end()),
    };
  };
}
