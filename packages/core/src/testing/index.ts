/**
 * `@runloom/core/testing`: what an adapter author needs to prove an adapter of a port. Each
 * contract suite is a function taking a factory; call it inside a mocha file and the adapter must
 * pass it unchanged, as every adapter shipped here does. The fake vendors speak the wire format of
 * each of the seven model providers on loopback, so model calls run without the network.
 */
export { blobStoreContract, patterned, readAll, streamOf } from '../adapters/blob-store.contract';
export { clockContract } from '../adapters/clock.contract';
export { contentHasherContract } from '../adapters/content-hasher.contract';
export { describeDatabaseContract, type DatabaseUnderTest } from '../adapters/database.contract';
export { describeEventBusContract, type EventBusTestBed } from '../adapters/event-bus.contract';
export { describeHttpClientContract, startLoopbackSink, type LoopbackSink } from '../adapters/http-client.contract';
export { idGeneratorContract } from '../adapters/id-generator.contract';
export { describeJobQueueContract, CONTRACT_NOTES, type JobQueueTestBed } from '../adapters/job-queue.contract';
export { loggerContract } from '../adapters/logger.contract';
export { describeModelGatewayContract, useFakeVendor } from '../adapters/model-gateway.contract';
export { multipartParserContract, multipartBody } from '../adapters/multipart-parser.contract';
export { passwordHasherContract } from '../adapters/password-hasher.contract';
export { describePatternMatcherContract } from '../adapters/pattern-matcher.contract';
export { describeProcessLauncherContract } from '../adapters/process-launcher.contract';
export { describeSecretBoxContract } from '../adapters/secret-box.contract';
export { describeGitClientContract, type GitClientTestBed, type GitRemoteFixture } from '../adapters/git-client.contract';
export { messageSignerContract } from '../adapters/message-signer.contract';
export { documentConverterContract, minimalDocx } from '../adapters/document-converter.contract';
export {
  describeWorkspaceFileSystemContract,
  HOSTILE_PATHS,
  OUTSIDE_CONTENT,
  type WorkspaceFileSystemTestBed,
} from '../adapters/workspace-file-system.contract';
export * from './fake-vendors';
