/**
 * EXIF, IPTC and XMP fields a DAM user expects, read from the raw blocks sharp hands over.
 * Small, bounded parsers: a malformed block yields fewer fields, never an exception.
 */
const EXIF_TAGS: Record<number, string> = {
  0x010f: 'make',
  0x0110: 'model',
  0x0131: 'software',
  0x0132: 'modifyDate',
  0x013b: 'artist',
  0x8298: 'copyright',
  0x010e: 'imageDescription',
  0x829a: 'exposureTime',
  0x829d: 'fNumber',
  0x8827: 'iso',
  0x9003: 'dateTimeOriginal',
  0x9004: 'createDate',
  0x920a: 'focalLength',
  0xa434: 'lensModel',
  0xa002: 'exifImageWidth',
  0xa003: 'exifImageHeight',
  0x0112: 'orientation',
};
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8 };

export function parseExif(block: Buffer | undefined): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (!block || block.length < 14) return out;
  try {
    const start = block.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? 6 : 0;
    const tiff = block.subarray(start);
    const little = tiff.subarray(0, 2).toString('latin1') === 'II';
    const u16 = (o: number) => (little ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
    const u32 = (o: number) => (little ? tiff.readUInt32LE(o) : tiff.readUInt32BE(o));
    const i32 = (o: number) => (little ? tiff.readInt32LE(o) : tiff.readInt32BE(o));
    const readIfd = (offset: number, depth: number) => {
      if (depth > 2 || offset <= 0 || offset + 2 > tiff.length) return;
      const count = Math.min(u16(offset), 512);
      for (let i = 0; i < count; i++) {
        const entry = offset + 2 + i * 12;
        if (entry + 12 > tiff.length) return;
        const tag = u16(entry);
        const type = u16(entry + 2);
        const n = u32(entry + 4);
        const size = (TYPE_SIZE[type] ?? 1) * n;
        const at = size > 4 ? u32(entry + 8) : entry + 8;
        if (tag === 0x8769) {
          readIfd(u32(entry + 8), depth + 1);
          continue;
        }
        const name = EXIF_TAGS[tag];
        if (!name || at + size > tiff.length) continue;
        if (type === 2)
          out[name] = tiff
            .subarray(at, at + size)
            .toString('utf8')
            .replace(/\0+$/, '')
            .trim();
        else if (type === 3) out[name] = u16(at);
        else if (type === 4) out[name] = u32(at);
        else if (type === 5 || type === 10) {
          const num = type === 5 ? u32(at) : i32(at);
          const den = type === 5 ? u32(at + 4) : i32(at + 4);
          out[name] =
            den === 0
              ? 0
              : name === 'exposureTime' && num < den
                ? `${num}/${den}`
                : Math.round((num / den) * 1000) / 1000;
        }
      }
    };
    readIfd(u32(4), 0);
  } catch {
    // a truncated block: keep what was read
  }
  return out;
}

const IPTC_DATASETS: Record<number, string> = {
  5: 'objectName',
  25: 'keywords',
  80: 'byLine',
  90: 'city',
  101: 'country',
  105: 'headline',
  110: 'credit',
  116: 'copyrightNotice',
  120: 'caption',
};

export function parseIptc(block: Buffer | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!block) return out;
  for (let i = 0; i + 5 <= block.length; i++) {
    if (block[i] !== 0x1c || block[i + 1] !== 0x02) continue;
    const dataset = block[i + 2]!;
    const length = block.readUInt16BE(i + 3);
    if (length & 0x8000 || i + 5 + length > block.length) continue;
    const name = IPTC_DATASETS[dataset];
    if (name) {
      const value = block.subarray(i + 5, i + 5 + length).toString('utf8');
      if (name === 'keywords') out.keywords = [...((out.keywords as string[] | undefined) ?? []), value];
      else out[name] = value;
    }
    i += 4 + length;
  }
  return out;
}

const XMP_FIELDS: [string, RegExp][] = [
  ['title', /<dc:title>([\s\S]*?)<\/dc:title>/],
  ['creator', /<dc:creator>([\s\S]*?)<\/dc:creator>/],
  ['description', /<dc:description>([\s\S]*?)<\/dc:description>/],
  ['rights', /<dc:rights>([\s\S]*?)<\/dc:rights>/],
  ['subject', /<dc:subject>([\s\S]*?)<\/dc:subject>/],
];

export function parseXmp(block: Buffer | string | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!block) return out;
  const text = (typeof block === 'string' ? block : block.toString('utf8')).slice(0, 1_000_000);
  const decode = (s: string) =>
    s
      .replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&')
      .trim();
  for (const [name, pattern] of XMP_FIELDS) {
    const match = pattern.exec(text);
    if (!match) continue;
    const items = [...match[1]!.matchAll(/<rdf:li[^>]*>([\s\S]*?)<\/rdf:li>/g)]
      .map((m) => decode(m[1]!))
      .filter(Boolean);
    const value = items.length > 0 ? items : [decode(match[1]!)];
    out[name] = name === 'subject' || value.length > 1 ? value : value[0]!;
  }
  for (const [attr, name] of [
    ['xmp:CreatorTool', 'creatorTool'],
    ['photoshop:Headline', 'headline'],
    ['xmp:Rating', 'rating'],
  ] as const) {
    const m = new RegExp(`${attr}="([^"]*)"`).exec(text) ?? new RegExp(`<${attr}>([^<]*)</${attr}>`).exec(text);
    if (m) out[name] = decode(m[1]!);
  }
  return out;
}

export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
