import { Type, type Static } from 'typebox';
import { MEDIA_TYPE_PATTERN } from './upload/content-types.ts';
import { docAs, docBinary, docRequiredOneOf } from '../../core/http/doc-schema.ts';
import {
  denormalizedDoc,
  legacyTableDoc,
  legacyValueDoc,
  metadataItemInputDoc,
  simplifiedOrSystemValueDoc,
} from '../metadata/index.ts';

const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
const Nullable = <
  T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>,
>(
  t: T,
) => Type.Union([t, Type.Null()]);

export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100, description: 'objectId or fileId' }),
});

const MetadataDocument = Type.Union([Type.Array(docAs(Type.Unknown(), metadataItemInputDoc)), Type.Null()], {
  description:
    'Legacy metadata document (reference §7.17): [{metadataDefinitionId, metadataDefinitionValue | metadataDefinitionTableValue}]',
});
const SimpleMetadata = Type.Union([Type.Array(docAs(Type.Unknown(), metadataItemInputDoc)), Type.Null()], {
  description: 'Name-based metadata (reference §7.17): [{name, value}]',
});

const createFields = {
  metadataTemplateId: Type.Optional(
    Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
      description: 'Metadata template (required for a new asset)',
    }),
  ),
  securityTemplateIds: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 50,
      description:
        "Security templates (required for a new asset, except from a caller without Security Template Management, who gets the organization's Default security template when this is left out)",
    }),
  ),
  filename: Type.Optional(
    Type.String({ maxLength: 1000, description: 'File name; present ⇒ the response says where to upload the content' }),
  ),
  originalFileId: Type.Optional(Type.String({ maxLength: 100, description: 'Present ⇒ a new version of that asset' })),
  filesize: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 5 * 1024 ** 4,
      description: 'Bytes; above the part size (100 MB) the upload is multipart',
    }),
  ),
  fileSize: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 5 * 1024 ** 4,
      description: 'Alias of filesize (the reference example spells it so)',
    }),
  ),
  checksum: Type.Optional(
    Type.String({ maxLength: 64, description: 'SHA-256 of the content (hex); verified when it arrives' }),
  ),
  contentType: Type.Optional(
    Type.String({
      maxLength: 200,
      pattern: MEDIA_TYPE_PATTERN,
      description: 'Media type of the content (RFC 6838 type/subtype, optional parameters); checked against its bytes',
    }),
  ),
  contentPath: Type.Optional(Type.String({ maxLength: 2000, description: 'Federated assets: s3://bucket/path/file' })),
  skipTranscode: Type.Optional(Type.Boolean({ description: 'Federated assets: make no renditions' })),
  overwriteEmbeddedMetadata: Type.Optional(
    Type.Boolean({
      description:
        "Tessera's own: the IPTC, XMP and EXIF fields embedded in the content replace attribute values already set (a new version inherits its values; by default embedded fields only fill empty attributes)",
    }),
  ),
  onDuplicate: Type.Optional(
    Type.Union([Type.Literal('report'), Type.Literal('refuse'), Type.Literal('version')], {
      description:
        "Tessera's own, with checksum: content already in the organization is reported in duplicates (report, the default), refused with 409 (refuse), or added as a new version of the asset holding it (version)",
    }),
  ),
};

export const LegacyCreateSchema = Type.Object(
  { ...createFields, metadata: Type.Optional(MetadataDocument) },
  {
    // As the reference's training (large-upload.md) sends it.
    examples: [
      {
        metadataTemplateId: '3c2e1f0a-7b6d-4e5f-8a9b-0c1d2e3f4a5b',
        securityTemplateIds: ['5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a'],
        filename: 'filename.mp4',
        filesize: 1048576,
        metadata: [
          {
            metadataDefinitionId: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d',
            metadataDefinitionValue: 'Testing 1 MiB File via Rest API',
          },
        ],
      },
    ],
  },
);
// A new asset needs its templates, a new version the asset it continues (checked by the service, which names what is missing).
docRequiredOneOf(LegacyCreateSchema, [['metadataTemplateId', 'securityTemplateIds'], ['originalFileId']]);
export type LegacyCreate = Static<typeof LegacyCreateSchema>;
export const SimpleCreateSchema = Type.Object({ ...createFields, metadata: Type.Optional(SimpleMetadata) });
docRequiredOneOf(SimpleCreateSchema, [['metadataTemplateId', 'securityTemplateIds'], ['originalFileId']]);
export type SimpleCreate = Static<typeof SimpleCreateSchema>;

const PartUrl = Type.Object({ partNumber: Type.Integer(), url: Type.String() });
export const CreateResponseSchema = Type.Object({
  filename: Type.String(),
  objectId: Uuid,
  fileId: Uuid,
  originalFileId: Uuid,
  versionNumber: Type.Integer(),
  url: Type.Optional(
    Type.String({
      description: 'Presigned PUT URL of the content (single upload); for federated assets the content path',
    }),
  ),
  uploadId: Type.Optional(Type.String({ description: 'Multipart upload id, for POST /v1/asset/complete' })),
  urls: Type.Optional(Type.Array(PartUrl, { description: 'One presigned PUT URL per part' })),
  partSize: Type.Optional(
    Type.Integer({ description: 'Bytes in every part but the last (multipart uploads; Tessera)' }),
  ),
  expiresEpoch: Type.Optional(Type.Integer({ description: 'When the upload URLs stop working (epoch ms)' })),
  duplicates: Type.Optional(
    Type.Array(Uuid, {
      description:
        "Tessera's own: objectIds of assets you may view that hold the same bytes (SHA-256), when they are known: the create request's checksum, or the form upload's file",
    }),
  ),
});

export const SimpleCreateResponseSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  data: CreateResponseSchema,
});

export const BulkCreateSchema = Type.Object({
  assets: Type.Array(SimpleCreateSchema, {
    minItems: 1,
    maxItems: 1000,
    description:
      'New metadata-only assets, each the body POST /v1/assets/asset takes for one (metadataTemplateId, securityTemplateIds, metadata; no filename, contentPath or originalFileId)',
  }),
});
export type BulkCreate = Static<typeof BulkCreateSchema>;
export const BulkCreateResponseSchema = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  data: Type.Array(CreateResponseSchema, { description: 'The created assets, in request order' }),
});

const Url = (description: string) => Type.Optional(Type.String({ description }));
const renditionSize = {
  width: Type.Optional(Type.Integer({ description: 'Pixel width of the source (after EXIF orientation)' })),
  height: Type.Optional(Type.Integer({ description: 'Pixel height of the source (after EXIF orientation)' })),
};
/** The renditions of the legacy Asset (reference §7.1): URLs by name, served by Tessera, and the source's size. */
const Renditions = Type.Object(
  {
    imageThumb: Url('200 px (the reference: 200x200)'),
    imagePreview: Url('700 px'),
    imagePreviewLarge: Url('1000 px'),
    mezzaninePreview: Url('3000 px'),
    fpo: Url("For placement only: the 1000-pixel rendition under the reference's name"),
    ...renditionSize,
  },
  {
    additionalProperties: Type.String({
      description: 'Other renditions (videoProxy, audioPreview, page images, …): their URLs',
    }),
    description:
      'Rendition name → URL (served by Tessera, GET /v1/asset/{id}/rendition/{name}), plus width and height of the source',
  },
);
/** The same under the 1.5 and webhook names (thumbnail, preview, large, mezzanine, fpo). */
const ShortRenditions = Type.Object(
  {
    thumbnail: Url('200 px'),
    preview: Url('700 px'),
    large: Url('1000 px'),
    mezzanine: Url('3000 px'),
    fpo: Url('For placement only (1000 px)'),
    ...renditionSize,
  },
  {
    additionalProperties: Type.String({ description: 'Other renditions: their URLs' }),
    description: 'Rendition name → URL, plus width and height of the source',
  },
);

const Num = (description: string) => Type.Optional(Type.Number({ description }));
/*
 * The sections Tessera fills from the file (renditions/image-metadata.ts, media/audio-video.ts,
 * media/pdf.ts, media/office.ts), declared in the document only: a federated asset's client sets
 * them through POST technical-metadata, so the serializer writes them as they are.
 */
const doc = (type: string, description?: string) => ({ type, ...(description ? { description } : {}) });
const textOrList = { anyOf: [doc('string'), { type: 'array', items: doc('string') }] };
const section = (description: string, properties: Record<string, unknown>, other: unknown, example: unknown) => ({
  type: 'object',
  description,
  properties,
  additionalProperties: other,
  examples: [example],
});
const EXIF_DOC = section(
  'EXIF fields read (the IFD0 and Exif sub-IFD tags named here); rationals as numbers, exposureTime below 1 s as "1/250"',
  {
    make: doc('string'),
    model: doc('string'),
    software: doc('string'),
    modifyDate: doc('string', 'As written: YYYY:MM:DD hh:mm:ss'),
    artist: doc('string'),
    copyright: doc('string'),
    imageDescription: doc('string'),
    exposureTime: { anyOf: [doc('string'), doc('number')], description: 'Seconds ("1/250" below one)' },
    fNumber: doc('number'),
    iso: doc('integer'),
    dateTimeOriginal: doc('string', 'As written: YYYY:MM:DD hh:mm:ss'),
    createDate: doc('string', 'As written: YYYY:MM:DD hh:mm:ss'),
    focalLength: doc('number', 'Millimetres'),
    lensModel: doc('string'),
    exifImageWidth: doc('integer'),
    exifImageHeight: doc('integer'),
    orientation: doc('integer', '1 to 8'),
  },
  { anyOf: [doc('string'), doc('number')], description: 'Set by a federated asset’s client' },
  { make: 'Canon', model: 'EOS R5', fNumber: 2.8, exposureTime: '1/250', iso: 400 },
);
const IPTC_DOC = section(
  'IPTC (IIM) fields read',
  {
    objectName: doc('string'),
    keywords: { type: 'array', items: doc('string') },
    byLine: doc('string'),
    city: doc('string'),
    country: doc('string'),
    headline: doc('string'),
    credit: doc('string'),
    copyrightNotice: doc('string'),
    caption: doc('string'),
  },
  { ...textOrList, description: 'Set by a federated asset’s client' },
  { keywords: ['harbour', 'boats'], byLine: 'Jane Doe', city: 'Oslo' },
);
const XMP_DOC = section(
  'XMP fields read (Dublin Core and a few others); a list where the packet holds several values',
  {
    title: textOrList,
    creator: textOrList,
    description: textOrList,
    rights: textOrList,
    subject: { type: 'array', items: doc('string') },
    creatorTool: doc('string'),
    headline: doc('string'),
    rating: doc('string'),
  },
  { ...textOrList, description: 'Set by a federated asset’s client' },
  { title: 'Harbour at dusk', subject: ['harbour', 'boats'], creatorTool: 'Adobe Lightroom' },
);
const nullable = (type: string, description?: string) => ({
  anyOf: [doc(type), doc('null')],
  ...(description ? { description } : {}),
});
const mediaDoc = (kind: 'Video' | 'Audio') =>
  section(
    `${kind} file as ffprobe describes it (the container, then the first ${kind === 'Video' ? 'video and audio streams' : 'audio stream'}); null where it does not say`,
    {
      container: nullable('string', 'ffprobe format_name'),
      containerName: nullable('string'),
      durationSeconds: nullable('number'),
      bitRate: nullable('number', 'Bits per second'),
      ...(kind === 'Video'
        ? {
            videoCodec: nullable('string'),
            videoCodecName: nullable('string'),
            videoProfile: nullable('string'),
            width: nullable('integer', 'Pixels, as displayed (rotation applied)'),
            height: nullable('integer', 'Pixels, as displayed (rotation applied)'),
            frameRate: nullable('number'),
            pixelFormat: nullable('string'),
            videoBitRate: nullable('number'),
            rotated: doc('boolean', 'Turned by 90° or 270°'),
          }
        : {}),
      audioCodec: nullable('string'),
      audioCodecName: nullable('string'),
      sampleRate: nullable('number', 'Hz'),
      audioChannels: nullable('integer'),
      channelLayout: nullable('string'),
      audioBitRate: nullable('number'),
      probedBy: doc('string', 'ffprobe'),
    },
    {
      anyOf: [doc('string'), doc('number'), doc('boolean'), doc('null')],
      description: 'Set by a federated asset’s client',
    },
    kind === 'Video'
      ? { container: 'mov,mp4,m4a,3gp,3g2,mj2', durationSeconds: 60, videoCodec: 'h264', width: 1920, height: 1080 }
      : { container: 'mp3', durationSeconds: 184.2, audioCodec: 'mp3', sampleRate: 44100, audioChannels: 2 },
  );
const DOCUMENT_DOC = section(
  "PDF and office documents: page count, the document's own properties (title, author, subject, creator, producer, …, as strings), page size, extracted text",
  {
    pageCount: doc('integer'),
    slideCount: doc('integer', 'Presentations'),
    sheetCount: doc('integer', 'Spreadsheets'),
    pageWidthPt: doc('number', 'PDF: page 1, points'),
    pageHeightPt: doc('number', 'PDF: page 1, points'),
    textCharacters: doc('integer', 'Characters of text kept for search'),
    textTruncated: doc('boolean'),
    extractedBy: doc('string'),
    previewNote: doc('string', 'Why there is no page preview'),
  },
  {
    anyOf: [doc('string'), doc('number'), doc('boolean')],
    description: 'A property of the document (a string or number)',
  },
  { pageCount: 12, title: 'Annual report', author: 'Jane Doe', textCharacters: 48210, textTruncated: false },
);

const Str = (description: string) => Type.Optional(Type.String({ description }));
const Int = (description: string) => Type.Optional(Type.Integer({ description }));
/** Technical metadata (reference §7.1): `tenovos_metadata` and the ExifTool-style `image_metadata`, plus Tessera's media sections. */
export const TechnicalMetadataSchema = Type.Object(
  {
    tenovos_metadata: Type.Optional(
      Type.Object(
        {
          fileName: Str('The file name'),
          fileSize: Str('Human-readable size, e.g. "4.4 MB"'),
          fileSizeInBytes: Int('Bytes'),
          MD5Checksum: Str('MD5 (hex)'),
          SHA256Checksum: Str("SHA-256 (hex; Tessera's own)"),
        },
        { additionalProperties: true },
      ),
    ),
    image_metadata: Type.Optional(
      Type.Object(
        {
          fileType: Str('JPEG, PNG, TIFF, …'),
          fileTypeExtension: Str('jpg, png, …'),
          mimeType: Str('Media type'),
          imageWidth: Int('Pixels'),
          imageHeight: Int('Pixels'),
          imageSize: Str('"<width>x<height>" as stored'),
          megapixels: Num('Million pixels'),
          bitsPerSample: Int('Bits per sample'),
          colorComponents: Int('Colour components'),
          encodingProcess: Str('JPEG: Baseline DCT, Huffman coding, …'),
          yCbCrSubSampling: Str('JPEG chroma subsampling, e.g. "YCbCr4:2:0 (2 2)"'),
          colorType: Str('PNG colour type'),
          xResolution: Num('Horizontal resolution'),
          yResolution: Num('Vertical resolution'),
          resolutionUnit: Str('inches or cm'),
          colorSpaceData: Str('ICC data colour space (RGB, GRAY, CMYK, …)'),
          profileDescription: Str('ICC profile description'),
          profileClass: Str('ICC profile class'),
          profileVersion: Str('ICC profile version'),
          profileConnectionSpace: Str('ICC profile connection space'),
          profileCopyright: Str('ICC profile copyright'),
          orientation: Int('EXIF orientation (1 to 8)'),
          hasAlpha: Type.Optional(Type.Boolean()),
          interpretation: Type.Optional(
            Type.Union([Type.String(), Type.Null()], { description: "libvips' colour space (Tessera's own)" }),
          ),
          exif: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), EXIF_DOC)),
          iptc: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), IPTC_DOC)),
          xmp: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), XMP_DOC)),
        },
        { additionalProperties: true, description: "ExifTool-style keys (reference §7.1) and Tessera's own" },
      ),
    ),
    video_metadata: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), mediaDoc('Video'))),
    audio_metadata: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), mediaDoc('Audio'))),
    document_metadata: Type.Optional(docAs(Type.Object({}, { additionalProperties: true }), DOCUMENT_DOC)),
    renditionError: Str('Why renditions could not be made'),
  },
  { additionalProperties: true },
);

/** One item of the legacy metadata document (reference §7.17). */
const LegacyMetadataItem = Type.Object(
  {
    metadataDefinitionId: Type.String({ description: 'The attribute' }),
    metadataDefinitionValue: Type.Optional(docAs(Type.Unknown(), legacyValueDoc)),
    metadataDefinitionTableValue: Type.Optional(
      docAs(Type.Array(Type.Array(Type.Unknown()), { description: 'Table attributes: rows of items' }), legacyTableDoc),
    ),
  },
  { additionalProperties: true },
);

/** What a client paints before the thumbnail loads (a Tessera field, issue 25 item 7). */
export const PlaceholderSchema = Type.Object(
  {
    thumbhash: Type.String({
      description: 'ThumbHash of the picture, base64 (decode with the thumbhash library: thumbHashToDataURL)',
    }),
    dominantColor: Type.String({ description: 'The dominant colour, #rrggbb' }),
  },
  {
    description:
      'Set by the renditions job for every asset with a picture (image, video poster frame, PDF page 1, office page 1); absent until then and for assets without one',
  },
);

/** The legacy Asset object (reference §7.1). */
const assetProperties = {
  objectId: Uuid,
  objectType: Type.String({ description: 'Asset' }),
  fileId: Uuid,
  originalFileId: Uuid,
  filename: Type.String(),
  fileState: Type.Union([Type.Literal('available'), Type.Literal('recycle bin')]),
  metadataState: Type.Union([Type.Literal('available'), Type.Literal('recycle bin')]),
  currentVersion: Type.Union([Type.Literal('Y'), Type.Literal('N')]),
  versionNumber: Type.Integer(),
  customerId: Type.String(),
  createdBy: Type.String(),
  lastUpdatedBy: Type.String(),
  createdEpoch: Type.Integer(),
  lastUpdatedEpoch: Type.Integer(),
  metadataDeletedEpoch: Nullable(Type.Integer()),
  metadataTemplateId: Nullable(Type.String()),
  metadata: Type.Array(LegacyMetadataItem),
  metadataDenormalized: docAs(
    Type.Object({}, { additionalProperties: true, description: 'searchField → value' }),
    denormalizedDoc,
  ),
  securityTemplateIds: Type.Array(Type.String()),
  securityDenormalized: Type.Array(Type.Object({ groupId: Type.String(), permissions: Type.Array(Type.String()) })),
  renditions: Renditions,
  renditionsState: Type.String({ description: 'none, pending, ready, failed or placeholder' }),
  placeholder: Type.Optional(PlaceholderSchema),
  technicalMetadata: TechnicalMetadataSchema,
  contentState: Type.Union([Type.Literal('pending'), Type.Literal('available'), Type.Literal('none')], {
    description:
      'Whether the content has arrived (a Tessera field): pending (an upload is open: content routes answer 409), available, none (a metadata-only asset, or an upload that was cancelled or expired)',
  }),
  contentType: Nullable(Type.String()),
  fileSizeInBytes: Nullable(Type.Integer()),
  isFederated: Type.Boolean(),
};

/**
 * The reference's Asset also lists presignedURL ("populated in download contexts") and linkType,
 * relationshipId and secondaryId ("populated in relationship contexts", reference §7.1). Tessera
 * fills them only there — GET /v1/asset/{id}/content answers {presignedURL}, GET /v1/asset/{id}/link
 * answers relationships carrying the other three — so no Asset read declares them.
 */
export const AssetSchema = Type.Object(assetProperties, { $id: 'Asset', title: 'Asset' });
/** An Asset as search answers it: `includes`/`excludes` may leave any field out, and other index fields in. */
export const AssetRecordSchema = Type.Partial(Type.Object(assetProperties, { additionalProperties: true }), {
  description: 'Asset record (reference §7.1); includes/excludes may leave fields out',
});

/**
 * An Action object (reference §5): the legacy Asset object with objectType Action — a DAM object
 * whose metadata template is an action-type template; createdBy is who created the template.
 */
export const ActionObjectSchema = Type.Object(
  {
    ...assetProperties,
    objectType: Type.Literal('Action'),
    filename: Type.String({ description: "The template's name" }),
  },
  { $id: 'ActionObject' },
);

export const SimpleAssetSchema = Type.Object(
  {
    objectId: Uuid,
    fileId: Uuid,
    originalFileId: Uuid,
    filename: Type.String(),
    fileSizeInBytes: Nullable(Type.Integer()),
    contentType: Nullable(Type.String()),
    createdDate: Type.String({ format: 'date-time' }),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
    createdBy: Type.String(),
    lastUpdatedBy: Type.String(),
    versionNumber: Type.Integer(),
    currentVersion: Type.Union([Type.Literal('Y'), Type.Literal('N')]),
    fileState: Type.String(),
    metadataState: Type.String(),
    metadataTemplate: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
    securityTemplates: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
    metadata: Type.Array(
      Type.Object({ name: Type.String(), value: docAs(Type.Unknown(), simplifiedOrSystemValueDoc) }),
    ),
    renditions: ShortRenditions,
    placeholder: Type.Optional(PlaceholderSchema),
  },
  { $id: 'SimpleAsset', title: 'SimpleAsset' },
);

export const SimpleGetQuery = Type.Object({
  empty: Type.Boolean({ default: true, description: 'false drops attributes without a value' }),
  system: Type.Boolean({ default: true, description: 'false drops system metadata fields' }),
});

export const SimpleGetResponse = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  data: Type.Ref('SimpleAsset'),
});

export const LegacyUpdateSchema = Type.Object({
  metadata: Type.Optional(MetadataDocument),
  securityTemplateIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
  metadataTemplateId: Type.Optional(Type.String({ maxLength: 100 })),
});
export const SimpleUpdateSchema = Type.Object({
  metadata: Type.Optional(SimpleMetadata),
  securityTemplateIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 50 })),
  metadataTemplateId: Type.Optional(Type.String({ maxLength: 100 })),
});
export const StatusMessage = Type.Object({ status: Type.Literal('success'), message: Type.String() });

export const DeleteSchema = Type.Object({
  action: Type.Union([Type.Literal('delete'), Type.Literal('undelete')]),
  deleteType: Type.Optional(Type.Literal('full', { description: 'Only full deletes exist' })),
});
export const DeleteResponse = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  data: Type.String({ description: 'The stored asset as JSON text (reference quirk)' }),
});

export const CompleteSchema = Type.Object({
  action: Type.Union([Type.Literal('complete'), Type.Literal('cancel')]),
  uploadId: Type.Optional(Type.String({ maxLength: 200 })),
  fileId: Type.Optional(Type.String({ maxLength: 100 })),
  filename: Type.Optional(Type.String({ maxLength: 1000 })),
  filesize: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 * 1024 ** 4 })),
  originalFileId: Type.Optional(Type.String({ maxLength: 100 })),
  parts: Type.Optional(
    Type.Array(
      Type.Object({
        partNumber: Type.Integer({ minimum: 1, maximum: 10_000 }),
        etag: Type.String({ minLength: 1, maxLength: 200 }),
      }),
      { maxItems: 10_000 },
    ),
  ),
});
export const CompleteResponse = Type.Object({
  fileId: Uuid,
  filename: Type.String(),
  action: Type.Union([Type.Literal('Complete'), Type.Literal('Cancel')]),
  originalFileId: Uuid,
  uploadId: Type.String(),
  s3Key: Type.String(),
  status: Type.Literal('success'),
});

export const UploadParams = Type.Object({ uploadId: Type.String({ format: 'uuid' }) });
export const PartParams = Type.Object({
  uploadId: Type.String({ format: 'uuid' }),
  partNumber: Type.Integer({ minimum: 1, maximum: 10_000 }),
});
export const SignedQuery = Type.Object({
  expires: Type.String({ maxLength: 20 }),
  signature: Type.String({ maxLength: 200 }),
});
export const RawBody = docBinary(
  Type.Any({
    description: 'The raw bytes of the file (any media type; the Content-Type, when sent, is checked against them)',
  }),
);
export const UploadReceived = Type.Object({ status: Type.Literal('success'), etag: Type.String() });
