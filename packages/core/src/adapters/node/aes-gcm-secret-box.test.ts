import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeSecretBoxContract } from '../secret-box.contract';
import { AesGcmSecretBox } from './aes-gcm-secret-box';

describeSecretBoxContract('AesGcmSecretBox', async () => new AesGcmSecretBox(randomBytes(32)));

describe('AesGcmSecretBox', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
  });
  afterEach(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prefixes sealed values with the key version', async () => {
    const box = new AesGcmSecretBox(randomBytes(32));
    assert.match(await box.seal('x'), /^v1\.[A-Za-z0-9_-]+$/);
  });

  it('uses config.secretKey, so instances given the same key read each other', async () => {
    const secretKey = randomBytes(32).toString('base64');
    const first = await AesGcmSecretBox.fromConfig({ secretKey, dataDir });
    const second = await AesGcmSecretBox.fromConfig({ secretKey, dataDir: path.join(dataDir, 'elsewhere') });
    assert.equal(await second.open(await first.seal('shared')), 'shared');
    assert.ok(!fs.existsSync(path.join(dataDir, 'secret.key')), 'no key file when the key is configured');
  });

  it('rejects a configured key that is not 32 bytes of base64 with a message naming the setting', async () => {
    await assert.rejects(AesGcmSecretBox.fromConfig({ secretKey: randomBytes(16).toString('base64'), dataDir }), /secretKey must be 32 bytes .*16 bytes/);
    await assert.rejects(AesGcmSecretBox.fromConfig({ secretKey: 'not base64!', dataDir }), /secretKey must be 32 bytes .*not base64/);
  });

  it('generates the key once into <dataDir>/secret.key (mode 0600) and reuses it', async () => {
    const nested = path.join(dataDir, 'data');
    const first = await AesGcmSecretBox.fromConfig({ dataDir: nested });
    const keyFile = path.join(nested, 'secret.key');
    assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    const keyText = fs.readFileSync(keyFile, 'utf8');
    assert.equal(Buffer.from(keyText.trim(), 'base64').length, 32);

    const sealed = await first.seal('kept across restarts');
    const reopened = await AesGcmSecretBox.fromConfig({ dataDir: nested });
    assert.equal(await reopened.open(sealed), 'kept across restarts');
    assert.equal(fs.readFileSync(keyFile, 'utf8'), keyText);
    assert.deepEqual(fs.readdirSync(nested), ['secret.key'], 'no temp files left behind');
  });

  it('agrees on one key when several instances create it at the same time', async () => {
    const boxes = await Promise.all(Array.from({ length: 8 }, () => AesGcmSecretBox.fromConfig({ dataDir })));
    const sealed = await boxes[0]!.seal('one key');
    for (const box of boxes) assert.equal(await box.open(sealed), 'one key');
    assert.deepEqual(fs.readdirSync(dataDir), ['secret.key']);
  });

  it('refuses a corrupt key file instead of replacing it', async () => {
    fs.writeFileSync(path.join(dataDir, 'secret.key'), 'short\n', { mode: 0o600 });
    await assert.rejects(AesGcmSecretBox.fromConfig({ dataDir }), /secret\.key must be 32 bytes/);
    assert.equal(fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8'), 'short\n');
  });
});
