import { thumbHashToDataURL } from 'thumbhash';

const painted = new Map<string, string>();

/**
 * The tile's background before its thumbnail arrives: the asset's blurred ThumbHash over its
 * dominant colour (the record's `placeholder`), decoded once per hash.
 */
export function placeholderStyle(
  placeholder: { thumbhash: string; dominantColor: string } | undefined,
): string | undefined {
  if (!placeholder) return undefined;
  let url = painted.get(placeholder.thumbhash);
  if (url === undefined) {
    try {
      url = thumbHashToDataURL(Uint8Array.from(atob(placeholder.thumbhash), (c) => c.charCodeAt(0)));
    } catch {
      url = '';
    }
    if (painted.size > 2000) painted.clear();
    painted.set(placeholder.thumbhash, url);
  }
  const color = /^#[0-9a-f]{6}$/i.test(placeholder.dominantColor) ? placeholder.dominantColor : 'transparent';
  return `background-color: ${color};${url ? ` background-image: url("${url}"); background-size: cover;` : ''}`;
}
