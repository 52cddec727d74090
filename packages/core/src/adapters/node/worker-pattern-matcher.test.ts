import { describePatternMatcherContract } from '../pattern-matcher.contract';
import { WorkerPatternMatcher } from './worker-pattern-matcher';

describePatternMatcherContract('WorkerPatternMatcher', () => new WorkerPatternMatcher());
