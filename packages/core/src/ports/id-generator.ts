/** Makes record ids: UUID v7, so ids sort by creation time. */
export const IdGenerator = Symbol.for('runloom.IdGenerator');
export interface IdGenerator {
  newId(): string;
}
