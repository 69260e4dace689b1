import type { Metadata } from 'sharp';

/**
 * The reference's `technicalMetadata.image_metadata` keys (reference §7.1: ExifTool's tag names in
 * lowerCamelCase, printed values as ExifTool prints them), derived from what sharp reads from the
 * header and the ICC profile. Bounded parsing: a malformed profile yields fewer keys, never an error.
 */
export function exiftoolKeys(meta: Metadata): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  const bits = BITS[meta.depth ?? ''];
  if (bits !== undefined) out.bitsPerSample = bits;
  if (meta.channels)
    out.colorComponents =
      meta.format === 'png' || meta.format === 'webp' ? meta.channels : meta.channels - (meta.hasAlpha ? 1 : 0);
  if (meta.format === 'jpeg') {
    out.encodingProcess = meta.isProgressive ? 'Progressive DCT, Huffman coding' : 'Baseline DCT, Huffman coding';
    if (meta.chromaSubsampling) out.yCbCrSubSampling = SUBSAMPLING[meta.chromaSubsampling] ?? meta.chromaSubsampling;
  }
  if (meta.format === 'png' && bits !== undefined)
    out.colorType =
      meta.channels === 4
        ? 'RGB with Alpha'
        : meta.channels === 3
          ? 'RGB'
          : meta.channels === 2
            ? 'Grayscale with Alpha'
            : 'Grayscale';
  if (meta.width && meta.height) out.imageSize = `${meta.width}x${meta.height}`; // as stored, before EXIF orientation (ExifTool's Composite:ImageSize)
  if (meta.density) {
    out.xResolution = meta.density;
    out.yResolution = meta.density;
    out.resolutionUnit = meta.resolutionUnit === 'cm' ? 'cm' : 'inches';
  }
  const space = meta.space ? SPACES[meta.space] : undefined;
  if (space) out.colorSpaceData = space;
  Object.assign(out, iccKeys(meta.icc));
  return out;
}

const BITS: Record<string, number> = {
  uchar: 8,
  char: 8,
  ushort: 16,
  short: 16,
  uint: 32,
  int: 32,
  float: 32,
  double: 64,
};
const SUBSAMPLING: Record<string, string> = {
  '4:2:0': 'YCbCr4:2:0 (2 2)',
  '4:2:2': 'YCbCr4:2:2 (2 1)',
  '4:4:4': 'YCbCr4:4:4 (1 1)',
  '4:4:0': 'YCbCr4:4:0 (1 2)',
};
const SPACES: Record<string, string> = {
  srgb: 'RGB',
  rgb: 'RGB',
  rgb16: 'RGB',
  'b-w': 'GRAY',
  grey16: 'GRAY',
  cmyk: 'CMYK',
  lab: 'Lab',
  xyz: 'XYZ',
};
const CLASSES: Record<string, string> = {
  scnr: 'Input Device Profile',
  mntr: 'Display Device Profile',
  prtr: 'Output Device Profile',
  link: 'DeviceLink Profile',
  spac: 'ColorSpace Conversion Profile',
  abst: 'Abstract Profile',
  nmcl: 'NamedColor Profile',
};
const PLATFORMS: Record<string, string> = {
  APPL: 'Apple Computer Inc.',
  MSFT: 'Microsoft Corporation',
  'SGI ': 'Silicon Graphics Inc.',
  SUNW: 'Sun Microsystems Inc.',
};
const INTENTS = ['Perceptual', 'Media-Relative Colorimetric', 'Saturation', 'ICC-Absolute Colorimetric'];

/** The ICC profile header and its description and copyright tags, as ExifTool names them (`profile…`). */
export function iccKeys(icc: Buffer | undefined): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (!icc || icc.length < 128 || icc.subarray(36, 40).toString('latin1') !== 'acsp') return out;
  const sig = (at: number) =>
    icc
      .subarray(at, at + 4)
      .toString('latin1')
      .replace(/\0/g, '')
      .trim();
  try {
    out.profileCMMType = sig(4);
    out.profileVersion = `${icc[8]}.${icc[9]! >> 4}.${icc[9]! & 0x0f}`;
    out.profileClass = CLASSES[sig(12)] ?? sig(12);
    out.colorSpaceData = sig(16);
    out.profileConnectionSpace = sig(20);
    const n = (i: number) => String(icc.readUInt16BE(24 + i * 2)).padStart(2, '0');
    out.profileDateTime = `${icc.readUInt16BE(24)}:${n(1)}:${n(2)} ${n(3)}:${n(4)}:${n(5)}`;
    out.profileFileSignature = 'acsp';
    out.primaryPlatform = PLATFORMS[sig(40)] ?? sig(40);
    out.deviceManufacturer = sig(48);
    out.deviceModel = sig(52);
    out.renderingIntent = INTENTS[icc.readUInt32BE(64)] ?? String(icc.readUInt32BE(64));
    out.profileCreator = sig(80);
    const count = Math.min(icc.readUInt32BE(128), 100);
    for (let i = 0; i < count; i++) {
      const entry = 132 + i * 12;
      if (entry + 12 > icc.length) break;
      const name = {
        desc: 'profileDescription',
        cprt: 'profileCopyright',
        dmnd: 'deviceMfgDesc',
        dmdd: 'deviceModelDesc',
      }[sig(entry)];
      if (!name) continue;
      const text = iccText(icc, icc.readUInt32BE(entry + 4), icc.readUInt32BE(entry + 8));
      if (text) out[name] = text;
    }
  } catch {
    // a truncated profile: keep what was read
  }
  for (const [key, value] of Object.entries(out)) if (value === '') delete out[key];
  return out;
}

/** An ICC text element: `desc` (ASCII, v2), `mluc` (UTF-16BE, v4, first record) or `text`. */
function iccText(icc: Buffer, offset: number, size: number): string | undefined {
  if (offset + size > icc.length || size < 12) return undefined;
  const el = icc.subarray(offset, offset + size);
  const type = el.subarray(0, 4).toString('latin1');
  if (type === 'desc') {
    const n = Math.min(el.readUInt32BE(8), el.length - 12);
    return el
      .subarray(12, 12 + n)
      .toString('latin1')
      .replace(/\0+$/, '')
      .trim();
  }
  if (type === 'text') return el.subarray(8).toString('latin1').replace(/\0+$/, '').trim();
  if (type === 'mluc' && el.readUInt32BE(8) > 0 && el.length >= 28) {
    const length = el.readUInt32BE(20);
    const at = el.readUInt32BE(24);
    if (at + length > el.length || length % 2 !== 0) return undefined;
    const bytes = Buffer.from(el.subarray(at, at + length));
    return bytes.swap16().toString('utf16le').replace(/\0+$/, '').trim();
  }
  return undefined;
}
