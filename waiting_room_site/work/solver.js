// The work a place costs: the solver of the marketing link's challenge (core/join_work.py
// defines it; docs/apps.md spells it out for apps). Pure functions, no page, no network: the
// page runs them in Web Workers, and tests/js runs them under node.
//
// A challenge "1.<issued>.<target>.<count>.<nonce>.<mac>" has `count` sub-puzzles. The browser's
// challenge is shared (every browser following the bare link for a moment gets the edge's copy),
// so the page adds its own nonce: the seed is SHA-256 of "<challenge>~<visitor nonce>" (of the
// challenge's text alone without one, as apps may send); sub-puzzle i is solved by the first counter c (from 0) for
// which the first 32 bits of SHA-256(seed || uint32be(i) || uint32be(c)), read big-endian, are
// below `target`. That message is 40 bytes: one 64-byte block, so each try is one run of the
// compression function, of which only the word holding c changes.
//
// SHA-256 is written here from FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 6.2.2), on 32-bit
// integers: `| 0` keeps every sum in 32 bits, `>>> 0` reads a word as unsigned.

export const CHALLENGE_PATTERN =
  /^1\.([0-9]{1,12})\.([0-9]{1,10})\.([0-9]{1,3})\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/;

export function parseChallenge(text) {
  const match = typeof text === "string" ? CHALLENGE_PATTERN.exec(text) : null;
  if (!match) return null;
  const target = Number(match[2]);
  const count = Number(match[3]);
  if (target < 1 || target > 0xffffffff || count < 1 || count > 64) return null;
  return { text, issuedAt: Number(match[1]), target, count };
}

export function roundConstants() {
  // The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
  return new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
}

export function initialHash() {
  // The first 32 bits of the fractional parts of the square roots of the first 8 primes.
  return new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
}

// The message schedule (FIPS 180-4, 6.2.2 step 1): w[16..63] from the block's words w[0..15].
export function schedule(w) {
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15];
    const y = w[t - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
  }
}

// Rounds `first` to `last` - 1 (FIPS 180-4, 6.2.2 step 3) from the working variables `from`
// (a to h, eight words) into `into`.
export function rounds(from, w, k, first, last, into) {
  let a = from[0], b = from[1], c = from[2], d = from[3];
  let e = from[4], f = from[5], g = from[6], h = from[7];
  for (let t = first; t < last; t++) {
    const big1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + big1 + ((e & f) ^ (~e & g)) + k[t] + w[t]) | 0;
    const big0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (big0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  into[0] = a;
  into[1] = b;
  into[2] = c;
  into[3] = d;
  into[4] = e;
  into[5] = f;
  into[6] = g;
  into[7] = h;
}

// One block: `w` holds the block's 16 words in w[0..15] and room for the schedule up to w[63];
// `state` is updated in place.
export function compress(state, w, k) {
  schedule(w);
  const variables = new Int32Array(8);
  rounds(state, w, k, 0, 64, variables);
  for (let i = 0; i < 8; i++) state[i] = (state[i] + variables[i]) | 0;
}

// SHA-256 of `bytes` (a Uint8Array), as eight 32-bit words.
export function sha256Words(bytes) {
  const k = roundConstants();
  const state = initialHash();
  const blocks = Math.floor((bytes.length + 8) / 64) + 1;
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const bits = bytes.length * 8;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(padded.length - 4, bits >>> 0);
  const w = new Int32Array(64);
  for (let block = 0; block < blocks; block++) {
    for (let t = 0; t < 16; t++) w[t] = view.getInt32(block * 64 + t * 4);
    compress(state, w, k);
  }
  return state;
}

export function challengeSeed(text) {
  return sha256Words(new TextEncoder().encode(text));
}

// Tries counters from `start` for at most `tries`: the first that solves sub-puzzle `index`
// of `seed` (eight words) below `target`, or -1. The 40-byte message is one padded block whose
// words 0 to 8 never change: the nine rounds that read only them are run once (the "midstate"),
// and each try runs the other 55 with the counter in word 9.
export function searchCounters(seed, index, target, start, tries) {
  const k = roundConstants();
  const iv = initialHash();
  const w = new Int32Array(64);
  for (let t = 0; t < 8; t++) w[t] = seed[t];
  w[8] = index;
  w[10] = 0x80000000 | 0; // the padding's first bit
  w[15] = 320; // the message's length in bits
  const mid = new Int32Array(8);
  rounds(iv, w, k, 0, 9, mid);
  const variables = new Int32Array(8);
  const end = Math.min(start + tries, 0x100000000);
  for (let counter = start; counter < end; counter++) {
    w[9] = counter | 0;
    schedule(w);
    rounds(mid, w, k, 9, 64, variables);
    // Only the digest's first word is compared: the initial value plus the last `a`.
    if ((iv[0] + variables[0]) >>> 0 < target) return counter;
  }
  return -1;
}

// A solver's own nonce for a shared challenge: 16 bytes from the browser's CSPRNG, base64url
// (22 characters), as core/join_work.py's `visitor_nonce`.
export function visitorNonce(crypto) {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  const text = btoa(String.fromCharCode(...bytes));
  return text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// What the seed is the digest of: the challenge, with the visitor's nonce when there is one.
export function seedText(challenge, visitor) {
  return visitor ? `${challenge.text}~${visitor}` : challenge.text;
}

// Every sub-puzzle of `challenge` solved on this thread (tests, and a page without workers):
// the counters in order.
export function solveAll(challenge, visitor) {
  const seed = challengeSeed(seedText(challenge, visitor));
  const counters = [];
  for (let index = 0; index < challenge.count; index++) {
    const found = searchCounters(seed, index, challenge.target, 0, 0x100000000);
    if (found < 0) throw new Error("sub-puzzle " + index + " has no solution");
    counters.push(found);
  }
  return counters;
}

export function solutionText(challenge, counters, visitor) {
  return seedText(challenge, visitor) + "~" + counters.join(".");
}
