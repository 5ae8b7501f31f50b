// A small PNG decoder for the browser test's screenshots: 8-bit greyscale, RGB or RGBA (with or
// without alpha), not interlaced, which is what Chromium writes. Enough to tell a page that
// rendered from a blank one, without an image library.
import { inflateSync } from 'node:zlib';

export interface DecodedPng {
  width: number;
  height: number;
  /** Bytes per pixel (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA). */
  channels: number;
  /** Unfiltered scanlines, width × channels bytes each. */
  pixels: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(file: Buffer): DecodedPng {
  if (!file.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG file');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < file.length) {
    const length = file.readUInt32BE(offset);
    const type = file.toString('latin1', offset + 4, offset + 8);
    const body = file.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colourType, , , interlace] = [body[8]!, body[9]!, body[10], body[11], body[12]];
      const perPixel = CHANNELS[colourType];
      if (depth !== 8 || perPixel === undefined || interlace !== 0)
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
      channels = perPixel;
    } else if (type === 'IDAT') data.push(body);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const up = y === 0 ? Buffer.alloc(stride) : pixels.subarray((y - 1) * stride, y * stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels]! : 0;
      const b = up[x]!;
      const c = x >= channels ? up[x - channels]! : 0;
      const predictor =
        filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      out[x] = (line[x]! + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** Distinct colours, and the share of pixels unlike the top-left one (the page background). */
export function colourStats(png: DecodedPng): { distinctColours: number; nonBackgroundShare: number } {
  const { pixels, channels } = png;
  const colours = new Set<number>();
  const background = pixels.readUIntBE(0, Math.min(channels, 3));
  let other = 0;
  const count = png.width * png.height;
  for (let i = 0; i < count; i++) {
    const colour = pixels.readUIntBE(i * channels, Math.min(channels, 3));
    colours.add(colour);
    if (colour !== background) other++;
  }
  return { distinctColours: colours.size, nonBackgroundShare: other / count };
}
