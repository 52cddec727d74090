import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Migration } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { MessageSigner } from '../../ports/message-signer';
import { DomainError } from '../errors';
import { mediaTypeEssence } from '../resources/content-disposition';
import { WorkspaceService } from '../workspaces/workspace-service';
import type { SignedUploadQuery, UploadRequest } from './workspace-file-schemas';
import { refusingFileErrors } from './workspace-file-errors';
import { checkedPath, type FileChange, WorkspaceFileService } from './workspace-file-service';

/** Nonces of upload URLs used (or being used): kept until the URL expires, in the shared store. */
const NONCES = 'workspace_upload_nonces';

export const uploadMigrations: Migration[] = [
  { id: 'workspace-files/001-upload-nonces', steps: [{ createCollection: NONCES, fields: { expires_at: 'text' } }] },
];

/** How long an upload URL is accepted. */
export const UPLOAD_URL_TTL_MS = 15 * 60 * 1000;
/** The signing key's purpose: upload signatures verify for nothing else. */
const PURPOSE = 'workspace-upload';
/** Expired nonces removed per use of a URL, so the collection stays as small as the live URLs. */
const PURGE_BATCH = 100;

/** What `POST …/files` with `{size, content_type}` answers: an upload URL, or (size 0) the file itself. */
export type UploadAnswer =
  | { kind: 'url'; path: string; expires_at: string; signedQuery: SignedUploadQuery }
  | { kind: 'written'; change: FileChange };

/**
 * Signed upload URLs (docs/api.md#workspace-files): `POST …/files` with `{size, content_type}`
 * answers a URL whose query carries the workspace, account, path, size, content type, expiry and a
 * nonce, signed by the `MessageSigner`; `PUT` on it needs no bearer token. It is refused when the
 * signature does not match (403), after `expires` (403), when its nonce was used (409: the nonce is
 * recorded in the `Database` before the bytes are written, so a replay is refused after a restart
 * and on every instance sharing the store), and when the body is not exactly `size` bytes (400,
 * nothing kept; the nonce is then released, since nothing was stored with it).
 */
@injectable()
export class WorkspaceFileUploads {
  constructor(
    @inject(WorkspaceFileService) private readonly files: WorkspaceFileService,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(MessageSigner) private readonly signer: MessageSigner,
    @inject(Database) private readonly database: Database,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  /** An upload URL for `size` bytes at `path`; `size: 0` creates the empty file at once instead. */
  async request(accountId: string, workspaceId: string, path: string, input: UploadRequest): Promise<UploadAnswer> {
    const target = checkedPath(path, 'path');
    const limit = this.config.uploadLimitBytes;
    if (input.size > limit) throw DomainError.tooLarge(`size ${input.size} is over the upload limit of ${limit} bytes`);
    if (input.size === 0) return { kind: 'written', change: await this.files.write(accountId, workspaceId, target, new Uint8Array(0)) };
    await this.workspaces.requireWritable(accountId, workspaceId);
    // Refused now rather than at the PUT: a path through a link out of the root, or a directory.
    const files = await this.workspaces.files(accountId, workspaceId);
    const existing = await refusingFileErrors(() => files.stat(target));
    if (existing?.type === 'directory') throw DomainError.conflict(`'${target}' is a directory; upload the file at another path`);
    const expires = Math.floor((this.clock.now().getTime() + UPLOAD_URL_TTL_MS) / 1000);
    const fields: Omit<SignedUploadQuery, 'signature'> = {
      path: target,
      size: String(input.size),
      ...(input.content_type ? { content_type: input.content_type } : {}),
      expires: String(expires),
      nonce: this.ids.newId(),
      account: accountId,
    };
    return {
      kind: 'url',
      path: target,
      expires_at: new Date(expires * 1000).toISOString(),
      signedQuery: { ...fields, signature: this.signer.sign(PURPOSE, signedMessage(workspaceId, fields)) },
    };
  }

  /** Stores the body of a `PUT` on an upload URL of `workspaceId`, once; see the class comment. */
  async accept(
    workspaceId: string,
    query: SignedUploadQuery,
    body: ReadableStream<Uint8Array> | null,
    headers: { contentType: string | null; contentLength: number | null },
  ): Promise<FileChange> {
    const { signature, ...fields } = query;
    if (!this.signer.verify(PURPOSE, signedMessage(workspaceId, fields), signature)) {
      throw DomainError.forbidden('the upload URL is not valid (its signature does not match); use upload_url exactly as POST /workspace/{workspaceId}/files answered it');
    }
    const expiresAt = new Date(Number(fields.expires) * 1000);
    if (this.clock.now() >= expiresAt) {
      throw DomainError.forbidden(`the upload URL expired at ${expiresAt.toISOString()}; ask for a new one with POST /workspace/{workspaceId}/files`);
    }
    if (fields.content_type && claimsType(headers.contentType) && mediaTypeEssence(headers.contentType!) !== mediaTypeEssence(fields.content_type)) {
      throw DomainError.invalid(`the upload URL is for content of type ${fields.content_type}; send that Content-Type (or none, or application/octet-stream)`, [
        { path: 'content-type', message: `must be ${fields.content_type}` },
      ]);
    }
    await this.claim(fields.nonce, expiresAt);
    try {
      const content = body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
      return await this.files.write(fields.account, workspaceId, fields.path, content, { declaredSize: headers.contentLength, exactSize: Number(fields.size) });
    } catch (error) {
      // Nothing was stored with the URL: it may be used again. Should the release fail, the URL
      // stays spent, which only costs the client a new one.
      await this.database.write([{ op: 'delete', collection: NONCES, id: fields.nonce }]).catch(() => undefined);
      throw error;
    }
  }

  /** Records the nonce as used (409 when it already is), and drops a batch of expired ones. */
  private async claim(nonce: string, expiresAt: Date): Promise<void> {
    try {
      await this.database.write([{ op: 'insert', collection: NONCES, doc: { id: nonce, expires_at: expiresAt.toISOString() } }]);
    } catch (error) {
      if (error instanceof DuplicateIdError) throw DomainError.conflict('this upload URL was already used; ask for a new one with POST /workspace/{workspaceId}/files');
      throw error;
    }
    const expired = await this.database.find(NONCES, { where: { expires_at: { lt: this.clock.now().toISOString() } }, limit: PURGE_BATCH });
    // Housekeeping only (an expired URL is refused by its expiry): another instance purging the
    // same batch at once must not fail this upload.
    if (expired.length > 0) await this.database.write(expired.map((doc) => ({ op: 'delete' as const, collection: NONCES, id: doc.id }))).catch(() => undefined);
  }
}

/** Whether a PUT's Content-Type says anything: none, or the generic `application/octet-stream`, does not. */
function claimsType(contentType: string | null): boolean {
  return contentType !== null && mediaTypeEssence(contentType) !== 'application/octet-stream';
}

/** What the signature covers: every field of the URL and the workspace of its path. */
function signedMessage(workspaceId: string, fields: Omit<SignedUploadQuery, 'signature'>): string {
  return JSON.stringify([workspaceId, fields.account, fields.path, fields.size, fields.content_type ?? '', fields.expires, fields.nonce]);
}
