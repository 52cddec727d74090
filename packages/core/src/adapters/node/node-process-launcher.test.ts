import { describeProcessLauncherContract } from '../process-launcher.contract';
import { NodeProcessLauncher } from './node-process-launcher';

describeProcessLauncherContract('NodeProcessLauncher', () => new NodeProcessLauncher());
