import type Sharp from 'sharp';

let loading: Promise<typeof Sharp> | undefined;

/**
 * sharp, loaded by the first image operation rather than at start (lean start): with it come
 * libvips (~8 MiB resident) and its thread pool, which a server that only serves the API never
 * needs. Libvips caches decoded tiles by default; a server ingesting a stream of distinct images
 * gains nothing from it, so the cache is off.
 */
export function loadSharp(): Promise<typeof Sharp> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    return sharp;
  });
  return loading;
}
