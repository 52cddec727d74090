import { archiveWriterContract } from '../archive-writer.contract';
import { YazlArchiveWriter } from './yazl-archive-writer';

archiveWriterContract('YazlArchiveWriter', () => new YazlArchiveWriter());
