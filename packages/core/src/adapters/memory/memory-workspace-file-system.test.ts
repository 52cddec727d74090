import { describeWorkspaceFileSystemContract } from '../workspace-file-system.contract';
import { MemoryWorkspaceFileSystems } from './memory-workspace-file-system';

describeWorkspaceFileSystemContract('memory', async () => ({ systems: new MemoryWorkspaceFileSystems(), dispose: async () => undefined }));
