export interface NodeChildOptions {
  /** The child's environment; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Named in the one line printed when the child cannot be started. */
  what?: string;
}

export function runNodeChild(args: readonly string[], options?: NodeChildOptions): void;
