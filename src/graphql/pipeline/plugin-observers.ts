/**
 * The plugins' observers of one operation or one event, composed as one. Each plugin's hook and
 * each of its observer's calls runs on its own: one that throws is reported (with the plugin's
 * name) and dropped, and neither stops the others nor the operation or push it follows (a tracing
 * span left open by a neighbour's failure, a response sent and then failed, would be worse than a
 * missing observation).
 */
import type { Arrival, ArrivingOperation, EventObserver, OperationObserver, OperationPlugin } from './operation-plugin.js';

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

/** The `arrive` step over the plugins that hook it: the first answer wins, else their observers as one. */
export function composeArrivals(plugins: readonly OperationPlugin[], failed: ObserverFailure): (operation: ArrivingOperation) => Arrival {
  const hooks = plugins.flatMap((plugin) => (plugin.arrive ? [{ plugin: plugin.name, arrive: plugin.arrive.bind(plugin) }] : []));
  return (operation) => {
    let observers: Array<Named<OperationObserver>> | undefined;
    for (const hook of hooks) {
      let arrival: Arrival;
      try {
        arrival = hook.arrive(operation);
      } catch (error) {
        failed(hook.plugin, 'arrive', error);
        continue;
      }
      if (arrival === undefined) continue;
      if ('answer' in arrival) return arrival;
      (observers ??= []).push({ plugin: hook.plugin, observer: arrival.observer });
    }
    if (observers === undefined) return undefined;
    const all = observers;
    return {
      observer: {
        read: (ids, tests) => each(all, 'read', failed, (observer) => observer.read(ids, tests)),
        admitted: (op) => each(all, 'admitted', failed, (observer) => observer.admitted(op)),
        completed: (body) => each(all, 'completed', failed, (observer) => observer.completed(body)),
        finished: (status, contentType) => each(all, 'finished', failed, (observer) => observer.finished(status, contentType)),
      },
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
