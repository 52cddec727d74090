import { idGeneratorContract } from '../id-generator.contract';
import { UuidV7Generator } from './uuid-v7-generator';

idGeneratorContract('UuidV7Generator', () => new UuidV7Generator());
