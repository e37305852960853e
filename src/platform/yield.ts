/**
 * Resolves after the event loop has run what was waiting (I/O callbacks,
 * timers): work cut into slices awaits it between slices so no slice holds
 * the request thread for long.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
