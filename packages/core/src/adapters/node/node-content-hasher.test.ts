import { contentHasherContract } from '../content-hasher.contract';
import { NodeContentHasher } from './node-content-hasher';

contentHasherContract('NodeContentHasher', () => new NodeContentHasher());
