/** `npm start`: the service in a process of its own with the flags it needs (see ./launcher.ts). */
import { launchService } from './launcher.ts';

launchService();
