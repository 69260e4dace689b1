/** Decoded pixels handed to the image rendition pipeline (a PDF page, a video poster, a PSD composite…). */
export interface RawRaster {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

/** What the standard image renditions (imageThumb … mezzaninePreview) are made from. */
export type Visual = { kind: 'file'; path: string } | { kind: 'raw'; raster: RawRaster };

/** A rendition besides the four image sizes (a video proxy, an animated preview, an audio proxy). */
export interface ExtraRendition {
  name: string;
  path: string;
  ext: string;
  contentType: string;
  width: number;
  height: number;
}

/** What one converter made of a file. */
export interface MediaResult {
  /** Source of the image renditions; none = a placeholder thumbnail (with `note` saying why). */
  visual?: Visual;
  extra: ExtraRendition[];
  /** Merged into the asset's technical metadata (e.g. `{ document_metadata: {...} }`). */
  technical: Record<string, unknown>;
  /** Full text for search (the `content` keyword field). */
  text?: string;
  /** Why there is no visual (e.g. LibreOffice is not installed): kept in technical metadata. */
  note?: string;
}

/** Text kept for search: whitespace runs folded, cut at `max` characters. */
export function keptText(text: string, max: number): { text: string; truncated: boolean } {
  const folded = text
    .replace(/[\t\f\v\r ]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();
  return folded.length > max ? { text: folded.slice(0, max), truncated: true } : { text: folded, truncated: false };
}
