/**
 * Both values once both have settled; the first rejection in argument order, when one rejects. For
 * two things started together where neither may be left running unseen when the other fails.
 */
export async function settledInOrder<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}
