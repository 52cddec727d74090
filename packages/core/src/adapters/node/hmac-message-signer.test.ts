import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { messageSignerContract } from '../message-signer.contract';
import { HmacMessageSigner } from './hmac-message-signer';

messageSignerContract('HmacMessageSigner', (key) => new HmacMessageSigner(key));

describe('HmacMessageSigner.fromConfig', () => {
  it('signs with the key in <dataDir>/secret.key, so two instances on one data dir agree', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-signer-'));
    try {
      const first = await HmacMessageSigner.fromConfig({ dataDir });
      const second = await HmacMessageSigner.fromConfig({ dataDir });
      assert.equal(second.verify('upload', 'm', first.sign('upload', 'm')), true);
      const other = await HmacMessageSigner.fromConfig({ dataDir, secretKey: Buffer.alloc(32, 1).toString('base64') });
      assert.equal(other.verify('upload', 'm', first.sign('upload', 'm')), false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
