import { inject, injectable } from 'inversify';
import { base64url, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { RunloomConfig } from '../../config';
import { Clock } from '../../ports/clock';
import { Database, type Doc, type WriteOp } from '../../ports/database';
import { SecretBox, SecretKeyMismatchError } from '../../ports/secret-box';
import { SIGNING_KEYS } from './auth-migrations';

/** The one algorithm tokens are signed with, and therefore the only one verification accepts. */
export const SIGNING_ALGORITHM = 'EdDSA';

interface SigningKeyRecord extends Doc {
  /** The JWS `kid`. */
  id: string;
  alg: typeof SIGNING_ALGORITHM;
  public_jwk: JWK;
  /** The private JWK as JSON, sealed with the SecretBox. */
  private_jwk_sealed: string;
  created_at: string;
  /** Set when a newer key takes over signing; the key still verifies until `verify_until`. */
  retired_at: string | null;
  /** Retirement time + token lifetime: no token this key signed is valid after it. */
  verify_until: string | null;
}

/** The key that signs new tokens. */
interface Signer {
  kid: string;
  privateKey: CryptoKey;
}

interface LoadedKey {
  record: SigningKeyRecord;
  publicKey: CryptoKey;
}

/** After an unknown `kid`, how long before the store is read again (bounds lookups by forged kids). */
const UNKNOWN_KID_REFRESH_MS = 1000;

/**
 * The JWT signing keys, kept in the store. The newest active key signs; retired keys stay listed
 * in the JWKS and keep verifying until the tokens they signed have expired, so rotation never
 * invalidates a live token. Instances sharing a store pick up each other's keys on an unknown `kid`.
 */
@injectable()
export class SigningKeyRing {
  private readonly keys = new Map<string, LoadedKey>();
  private signer: Signer | undefined;
  /** The first key of a fresh store while it is being made, so concurrent first signers share it. */
  private firstKey: Promise<Signer> | undefined;
  /**
   * When an unknown `kid` last made this ring read the store. Only those reads count: a key another
   * instance made (its first on a fresh store, or a rotation) must verify on the first token it
   * signed, however recently this ring loaded its keys for another reason.
   */
  private lastUnknownKidRefreshMs = Number.NEGATIVE_INFINITY;

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(Clock) private readonly clock: Clock,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  /**
   * Loads the keys; opening the signing key here is what tells, at start, a secret key that does not
   * open this store's secrets. A fresh store gets its first key when a token or the JWKS first needs
   * one (`currentSigner`): making it (a key pair, sealed, written durably) was ~5% of a start, for a
   * key a server that is never asked for a token does not use.
   */
  async start(): Promise<void> {
    await this.refresh();
  }

  /** The key that signs new tokens; on a fresh store, the first one, made now. */
  async currentSigner(): Promise<Signer> {
    if (this.signer) return this.signer;
    this.firstKey ??= this.makeFirstKey().finally(() => (this.firstKey = undefined));
    return this.firstKey;
  }

  /** The public key of `kid`, if it may still verify tokens. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const known = this.keys.get(kid);
    if (known) return known.publicKey;
    const now = this.clock.now().getTime();
    if (now - this.lastUnknownKidRefreshMs < UNKNOWN_KID_REFRESH_MS) return undefined;
    this.lastUnknownKidRefreshMs = now;
    await this.refresh();
    return this.keys.get(kid)?.publicKey;
  }

  /** Public keys still able to verify a live token, newest first: the JWKS `keys`. Never empty. */
  async publicJwks(): Promise<JWK[]> {
    await this.currentSigner();
    const records = await this.verifyingRecords();
    return records.map((record) => ({ ...record.public_jwk, kid: record.id, alg: record.alg, use: 'sig' }));
  }

  /**
   * Makes a new signing key and retires the others; tokens they signed keep verifying until they
   * expire. Returns the new `kid`.
   */
  async rotate(): Promise<string> {
    const now = this.clock.now();
    const verifyUntil = new Date(now.getTime() + this.config.tokenTtlSeconds * 1000).toISOString();
    const fresh = await this.newKeyRecord();
    const active = (await this.database.find(SIGNING_KEYS, { where: { retired_at: null } })) as SigningKeyRecord[];
    const ops: WriteOp[] = active.map((record) => ({
      op: 'replace',
      collection: SIGNING_KEYS,
      doc: { ...record, retired_at: now.toISOString(), verify_until: verifyUntil },
      expect: { retired_at: null },
    }));
    await this.database.write([...ops, { op: 'insert', collection: SIGNING_KEYS, doc: fresh }]);
    await this.refresh();
    return fresh.id;
  }

  /** Makes the store's first key, unless another instance has made one since this one last read. */
  private async makeFirstKey(): Promise<Signer> {
    await this.refresh();
    if (!this.signer) {
      await this.database.write([{ op: 'insert', collection: SIGNING_KEYS, doc: await this.newKeyRecord() }]);
      await this.refresh();
    }
    if (!this.signer) throw new Error('the signing key just written is not in the store');
    return this.signer;
  }

  /** Re-reads the store: the verifying keys, and the newest active key as the signer. */
  private async refresh(): Promise<void> {
    const records = await this.verifyingRecords();
    this.keys.clear();
    for (const record of records) {
      const publicKey = (await importJWK(record.public_jwk, record.alg)) as CryptoKey;
      this.keys.set(record.id, { record, publicKey });
    }
    const newestActive = records.find((record) => record.retired_at === null);
    if (!newestActive) {
      this.signer = undefined;
      return;
    }
    if (this.signer?.kid === newestActive.id) return;
    let opened: string;
    try {
      opened = await this.secretBox.open(newestActive.private_jwk_sealed);
    } catch (error) {
      if (!(error instanceof SecretKeyMismatchError)) throw error;
      throw new SecretKeyMismatchError(
        "the secret key does not open this store's secrets (its token signing key): they were sealed with the key of the server that created them; start with that key (`secretKey`, or the data dir holding its secret.key)",
        { cause: error },
      );
    }
    const privateJwk = JSON.parse(opened) as JWK;
    this.signer = { kid: newestActive.id, privateKey: (await importJWK(privateJwk, newestActive.alg)) as CryptoKey };
  }

  private async verifyingRecords(): Promise<SigningKeyRecord[]> {
    const now = this.clock.now().toISOString();
    const records = (await this.database.find(SIGNING_KEYS, {
      orderBy: [{ field: 'created_at', direction: 'desc' }],
    })) as SigningKeyRecord[];
    // Active keys first (a stable sort keeps newest first within each group).
    return records
      .filter((record) => record.verify_until === null || record.verify_until > now)
      .sort((a, b) => Number(a.retired_at !== null) - Number(b.retired_at !== null));
  }

  private async newKeyRecord(): Promise<SigningKeyRecord> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { crv: 'Ed25519', extractable: true });
    const publicJwk = await exportJWK(publicKey);
    return {
      id: base64url.encode(crypto.getRandomValues(new Uint8Array(12))),
      alg: SIGNING_ALGORITHM,
      public_jwk: publicJwk,
      private_jwk_sealed: await this.secretBox.seal(JSON.stringify(await exportJWK(privateKey))),
      created_at: this.clock.now().toISOString(),
      retired_at: null,
      verify_until: null,
    };
  }
}
