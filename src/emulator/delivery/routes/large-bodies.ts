// Realistic message bodies for the log endpoints: a share of messages (knob `largeBodyRatio`)
// carry a body of `largeBodyBytes` bytes, up to the plans' 50 MB message size. Which messages
// is a pure function of the message id, so every read of an entry shows the same body; the
// base64 text is made once per size and shared, so the emulator's own memory stays flat.

let cached: { bytes: number; base64: string } | undefined;

/** FNV-1a of the id, mapped to [0, 1). */
function unitHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}

/** The base64 body a message's entries carry under the knobs, or undefined for its own body. */
export function largeBodyOf(messageId: string, ratio: number, bytes: number): string | undefined {
  if (ratio <= 0 || bytes <= 0 || unitHash(messageId) >= ratio) return undefined;
  if (cached?.bytes !== bytes) {
    const raw = Buffer.alloc(bytes);
    for (let i = 0; i < bytes; i++) raw[i] = 0x41 + (i % 26);
    cached = { bytes, base64: raw.toString('base64') };
  }
  return cached.base64;
}
