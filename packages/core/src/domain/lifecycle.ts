/**
 * Multi-bound: services that must start after the store is open (queue workers, crash recovery)
 * or stop before it closes. `createRunloom` starts them in module order and stops them in reverse.
 */
export const Lifecycle = Symbol.for('runloom.Lifecycle');
export interface Lifecycle {
  readonly name: string;
  start?(): Promise<void>;
  /** Finish or checkpoint in-flight work. */
  stop?(): Promise<void>;
}
