/** Structured logging. Never pass bodies, tokens or secrets. */
export const Logger = Symbol.for('runloom.Logger');
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}
