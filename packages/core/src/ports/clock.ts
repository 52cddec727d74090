/** The time source. Tests bind a controllable clock; the default reads the system clock. */
export const Clock = Symbol.for('runloom.Clock');
export interface Clock {
  now(): Date;
}
