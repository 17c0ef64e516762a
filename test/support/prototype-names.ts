/** Names every plain object answers through its prototype: the names hostile inputs are drawn from. */
export const PROTOTYPE_NAMES: readonly string[] = Object.getOwnPropertyNames(Object.prototype);
