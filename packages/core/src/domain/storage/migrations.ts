import type { Migration } from '../../ports/database';

/**
 * Multi-bound: each feature module binds its own migrations
 * (`bind(Migrations).toConstantValue([...])`); `createRunloom` applies them in module order.
 * Migration ids are `feature/NNN-what` and never change once released.
 */
export const Migrations = Symbol.for('runloom.Migrations');
export type Migrations = readonly Migration[];
