/**
 * Image previews with sharp: a WebP thumbnail that fits in THUMBNAIL_SIZE², the picture's size
 * (after EXIF orientation) and the preview size clients lay it out with.
 *
 * preview_size: `big` for a photo-like picture (longer side ≥ BIG_MIN_SIDE px, sides at most
 * 3:1); `medium` for small pictures, panoramas and long screenshots; `none` for anything without
 * a thumbnail (not an image, undecodable, or over the input limits below).
 */
import sharp from 'sharp'
import type { PreviewSize } from '../../db/tables.js'
import type { Source } from '../../storage/storage.js'

export const THUMBNAIL_SIZE = 320
const BIG_MIN_SIDE = 640
const BIG_MAX_RATIO = 3
/** sharp holds its input in memory, so larger images are stored without a thumbnail */
const MAX_INPUT_BYTES = 40 * 1024 * 1024
/** decompression bombs: a small file that decodes to gigapixels is refused */
const MAX_INPUT_PIXELS = 50_000_000
/** formats sharp decodes that browsers show as pictures (no SVG: it is markup) */
const DECODABLE = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/tiff', 'image/heic', 'image/heif'])

export interface Thumbnail {
  webp: Buffer
  width: number
  height: number
  preview_size: PreviewSize
}

export function previewSize(width: number, height: number): PreviewSize {
  const [long, short] = width >= height ? [width, height] : [height, width]
  return long >= BIG_MIN_SIDE && long <= short * BIG_MAX_RATIO ? 'big' : 'medium'
}

/** The thumbnail of an image, or null when it is not one we can (or should) decode. */
export async function makeThumbnail(mime: string, size: number, read: () => Promise<Source>): Promise<Thumbnail | null> {
  if (!DECODABLE.has(mime) || size > MAX_INPUT_BYTES) return null
  const chunks: Uint8Array[] = []
  for await (const chunk of await read()) chunks.push(chunk)
  try {
    const image = sharp(Buffer.concat(chunks), { limitInputPixels: MAX_INPUT_PIXELS })
    const { autoOrient } = await image.metadata()
    const webp = await image
      .autoOrient()
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 75 })
      .toBuffer()
    return { webp, width: autoOrient.width, height: autoOrient.height, preview_size: previewSize(autoOrient.width, autoOrient.height) }
  } catch {
    // a corrupt or truncated image is still a file; it just has no preview
    return null
  }
}
