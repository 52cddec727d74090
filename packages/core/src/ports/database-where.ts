import type { Condition, Doc, Query, Where } from './database';

/**
 * The meaning of `Where` and `Query`, evaluated on plain documents. The memory adapter runs on it,
 * and SQL adapters must agree with it (the contract suite checks both against the same cases).
 */
export function matchesWhere(doc: Doc, where: Where | undefined): boolean {
  if (!where) return true;
  return Object.entries(where).every(([field, condition]) => matchesCondition(doc[field], condition));
}

function matchesCondition(value: unknown, condition: Condition): boolean {
  if (condition === null || typeof condition !== 'object') return (value ?? null) === condition;
  if ('in' in condition) return condition.in.includes(value as string | number);
  if ('hasAll' in condition) return Array.isArray(value) && condition.hasAll.every((tag) => value.includes(tag));
  if ('ne' in condition) return (value ?? null) !== condition.ne;
  if (value === undefined || value === null) return false;
  const comparable = value as string | number;
  if ('lt' in condition) return comparable < condition.lt;
  if ('lte' in condition) return comparable <= condition.lte;
  if ('gt' in condition) return comparable > condition.gt;
  return comparable >= condition.gte;
}

export function compareDocs(query: Query | undefined): (a: Doc, b: Doc) => number {
  const order = query?.orderBy?.length ? query.orderBy : [{ field: 'id', direction: 'asc' as const }];
  return (a, b) => {
    for (const { field, direction } of order) {
      // Absent and null are the same value (as in a column), so they tie and fall through to id.
      const left = (a[field] ?? null) as string | number | null;
      const right = (b[field] ?? null) as string | number | null;
      if (left === right) continue;
      // Nulls sort first ascending, as in SQLite and PostgreSQL's NULLS FIRST for ASC here.
      const sign = left === null ? -1 : right === null ? 1 : left < right ? -1 : 1;
      return direction === 'desc' ? -sign : sign;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

/** Applies where, order, offset and limit to a list of documents. */
export function runQuery(docs: Iterable<Doc>, query: Query | undefined): Doc[] {
  const matched = [...docs].filter((doc) => matchesWhere(doc, query?.where)).sort(compareDocs(query));
  const offset = query?.offset ?? 0;
  return matched.slice(offset, query?.limit === undefined ? undefined : offset + query.limit);
}
