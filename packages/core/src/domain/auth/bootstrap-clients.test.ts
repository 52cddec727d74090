import assert from 'node:assert/strict';
import { parseBootstrapClients } from './bootstrap-clients';

describe('parseBootstrapClients', () => {
  it('reads ACCOUNT:CLIENT_ID:SECRET, the secret keeping any further colons', () => {
    assert.deepEqual(parseBootstrapClients(['acct-a:ci:s3cret', 'acct-b:svc:a:b:c']), [
      { accountId: 'acct-a', clientId: 'ci', secret: 's3cret' },
      { accountId: 'acct-b', clientId: 'svc', secret: 'a:b:c' },
    ]);
  });

  for (const entry of ['acct-only', 'acct:client', 'acct:client:', ':client:secret-x', 'acct::secret-x']) {
    it(`refuses '${entry}' by position, without repeating the entry`, () => {
      assert.throws(
        () => parseBootstrapClients(['ok:ok:ok', entry]),
        (error: Error) => /bootstrap client #2 is invalid: expected ACCOUNT:CLIENT_ID:SECRET/.test(error.message) && !error.message.includes('secret-x'),
      );
    });
  }
});
