/**
 * The AWS SDK's S3 client and multipart uploader, imported when an S3-compatible blob store is
 * first used. esbuild.mjs bundles this module on its own (`s3.js` beside each bundle holding the
 * core) and keeps the core's imports of it external, so a server on local blobs never parses the
 * SDK. Import it through `S3BlobStore`, never statically (types are fine).
 */
export {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
export { Upload } from '@aws-sdk/lib-storage';
