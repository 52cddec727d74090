import { multipartParserContract } from '../multipart-parser.contract';
import { BusboyMultipartParser } from './busboy-multipart-parser';

multipartParserContract('busboy', () => new BusboyMultipartParser());
