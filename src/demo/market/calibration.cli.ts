/**
 * Prints each calibration row's published figure beside the demo's:
 *   npx tsx src/demo/market/calibration.cli.ts [scale] [seed]
 * Counts read as at scale 1 whatever the scale; medians need scale 1 for their bands.
 *   npx tsx src/demo/market/calibration.cli.ts --table
 * prints the sources table of resources/README.md instead.
 */
import { CALIBRATION_OBSERVED_AT, calibrationTable, measureCalibration } from './calibration.ts';
import { DemoMarketGenerator } from './market.ts';

if (process.argv[2] === '--table') {
  process.stdout.write(calibrationTable());
  process.exit(0);
}

const scale = Number(process.argv[2] ?? 1);
const seed = Number(process.argv[3] ?? 20261121);
const started = Date.now();
const generator = new DemoMarketGenerator({ seed, scale, now: CALIBRATION_OBSERVED_AT });
const measures = measureCalibration(generator);
for (const m of measures) {
  const { row } = m;
  const what = `${row.metric}${row.bedrooms === null ? '' : ` ${row.bedrooms}br`} ${row.region} ${row.period}`;
  const deviation = m.deviation === null ? 'n/a' : `${(m.deviation * 100).toFixed(1)}%`;
  process.stdout.write(
    `${m.withinBand ? 'ok  ' : 'OUT '} ${what}: published ${row.value}, demo ${m.demo} (n=${m.sample}, ${deviation})\n`,
  );
}
process.stdout.write(`scanned in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
