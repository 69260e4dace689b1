/**
 * Rasterises one SVG in a child process of its own (svg-raster.ts starts it): librsvg draws a
 * filter in one native call that no timeout inside the process can interrupt, so the only way to
 * stop a filter bomb is to kill the process. Reads the SVG on stdin; argv[2] is
 * `{"box": n, "maxPixels": n}`; writes `ready` once it starts drawing, then one JSON line `{"width","height","channels"}` and then the
 * raw pixels to stdout, or a message on stderr and exit code 1.
 */
import sharp from 'sharp';

sharp.cache(false);
sharp.concurrency(1);

const { box, maxPixels } = JSON.parse(process.argv[2] ?? '{}') as { box: number; maxPixels: number };
const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
// The time limit counts from here: starting a process and loading libvips is not the SVG's doing.
process.stdout.write('ready\n');
try {
  const { data, info } = await sharp(Buffer.concat(chunks), { limitInputPixels: maxPixels, failOn: 'error' })
    .resize(box, box, { fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  process.stdout.write(`${JSON.stringify({ width: info.width, height: info.height, channels: info.channels })}\n`);
  process.stdout.write(data, () => process.exit(0));
} catch (error) {
  process.stderr.write(String((error as Error).message ?? error).slice(0, 500));
  process.exit(1);
}
