/**
 * How read-model rebuild threads give way to the request thread (./threads.ts);
 * the `BACKGROUND_PRIORITY` setting. A leaf module: every worker thread imports
 * it, and the settings' declaration (TypeBox, ~200 modules, ~0.4 s of CPU to
 * load under tsx) stays out of threads that do not read settings.
 */
export const BACKGROUND_PRIORITIES = ['idle', 'nice'] as const;
export type BackgroundPriority = (typeof BACKGROUND_PRIORITIES)[number];
