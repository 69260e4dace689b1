import type { MediaConfig } from '../../../../config.ts';
import { RAW_TYPES, typeFromFilename } from '../../upload/content-types.ts';
import type { MediaResult } from './media-types.ts';
import { convertOffice, convertText, OFFICE_TYPES, TEXT_TYPES } from './office/office.ts';
import { convertPdf } from './pdf/pdf.ts';
import { convertAudioVideo } from './audio-video/audio-video.ts';
import { convertHeic, convertPsd, convertRaw } from './images/images.ts';

export type MediaKind = 'pdf' | 'office' | 'text' | 'audio-video' | 'heic' | 'raw' | 'psd';

/**
 * Which converter takes a file, from its recorded content type and its file name (a DNG is
 * recorded as image/tiff by its signature, an .m4a as video/mp4). Undefined: the image pipeline
 * (sharp) for the formats it reads, a placeholder for the rest.
 */
export function mediaKind(contentType: string | null, filename: string): MediaKind | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const byName = typeFromFilename(filename);
  if (RAW_TYPES.has(type) || (byName && RAW_TYPES.has(byName))) return 'raw';
  if (type === 'image/heic' || type === 'image/heif' || byName === 'image/heif' || byName === 'image/heic')
    return 'heic';
  if (type === 'image/vnd.adobe.photoshop' || byName === 'image/vnd.adobe.photoshop') return 'psd';
  if (type === 'application/pdf') return 'pdf';
  if (
    OFFICE_TYPES.has(type) ||
    (byName &&
      OFFICE_TYPES.has(byName) &&
      (type === 'application/zip' || type === 'application/octet-stream' || type === byName))
  )
    return 'office';
  if (TEXT_TYPES.has(type) || (byName && TEXT_TYPES.has(byName) && type === 'application/octet-stream')) return 'text';
  if (type.startsWith('video/') || type.startsWith('audio/')) return 'audio-video';
  return undefined;
}

export interface ConvertInput {
  media: MediaConfig;
  kind: MediaKind;
  file: string;
  /** A folder of this job's own, removed after it. */
  dir: string;
  contentType: string;
  filename: string;
  /** The largest image rendition wanted (pixels, longest side). */
  box: number;
  /** TESSERA_RENDITION_MAX_PIXELS: decoded images above it are refused. */
  maxPixels: number;
  signal?: AbortSignal;
}

export function convertMedia(input: ConvertInput): Promise<MediaResult> {
  switch (input.kind) {
    case 'pdf':
      return convertPdf(input.media, input.file, input.box, input.signal);
    case 'office':
      return convertOffice(input);
    case 'text':
      return convertText(input);
    case 'audio-video':
      return convertAudioVideo(input);
    case 'heic':
      return convertHeic(input);
    case 'raw':
      return convertRaw(input);
    case 'psd':
      return convertPsd(input);
  }
}
