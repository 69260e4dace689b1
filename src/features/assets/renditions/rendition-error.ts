/** A file the converters cannot turn into renditions (corrupt, hostile, too big, too slow): recorded on the asset. */
export class RenditionError extends Error {}
