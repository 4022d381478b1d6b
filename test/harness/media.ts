/** Small media files whose type Tern detects from their bytes: PNG (made by sharp), MP4 and MP3 (built by hand). */
import sharp from 'sharp'
import { bytesOf } from './files.js'

/** A PNG of one colour; a distinct `shade` gives distinct bytes. */
export const png = (width = 64, height = 48, shade = 0) =>
  sharp({ create: { width, height, channels: 3, background: { r: shade % 256, g: 120, b: 200 } } })
    .png()
    .toBuffer()

/** An MP4 (an `ftyp` box, then an `mdat` box of `seed`-derived bytes). */
export function mp4(seed: string, size = 2000): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41')])
  const header = Buffer.alloc(8)
  header.writeUInt32BE(size + 8)
  header.write('mdat', 4)
  return Buffer.concat([ftyp, header, bytesOf(size, seed)])
}

/** An MP3 (an ID3v2 header, a frame header, then `seed`-derived bytes). */
export function mp3(seed: string, size = 2000): Buffer {
  return Buffer.concat([Buffer.from('ID3'), Buffer.from([3, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64]), bytesOf(size, seed)])
}
