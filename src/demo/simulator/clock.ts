/**
 * The simulator's clock is the platform's ScaledClock (the market clock of the
 * live demo): re-exported here for the simulator and its tests.
 */
export { ScaledClock, type ScaledClockOptions } from '../../platform/clock.ts';
