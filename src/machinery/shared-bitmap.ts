// SharedBitmap: a set of small integers in a SharedArrayBuffer, changed only with Atomics, so that every thread that
// holds the buffer takes and gives back members of one set (the allocation maps of service cluster IPs and node ports).

const FULL = -1

export class SharedBitmap {
  /** Members are 0 .. size-1. */
  readonly size: number
  readonly #words: Int32Array

  /** The bytes a bitmap of `size` members needs (at least one word). */
  static bytesFor(size: number): number { return Math.max(1, Math.ceil(size / 32)) * 4 }

  constructor(buffer: SharedArrayBuffer, size: number) {
    if (buffer.byteLength < SharedBitmap.bytesFor(size)) throw new Error(`a bitmap of ${size} members needs ${SharedBitmap.bytesFor(size)} bytes, got ${buffer.byteLength}`)
    this.size = size
    this.#words = new Int32Array(buffer)
  }

  has(i: number): boolean {
    if (!(i >= 0 && i < this.size)) return false
    return (Atomics.load(this.#words, i >>> 5) & (1 << (i & 31))) !== 0
  }

  /** Takes `i`; false when it is taken already (or not a member). */
  take(i: number): boolean {
    if (!(i >= 0 && i < this.size)) return false
    const w = i >>> 5
    const bit = 1 << (i & 31)
    for (;;) {
      const old = Atomics.load(this.#words, w)
      if ((old & bit) !== 0) return false
      if (Atomics.compareExchange(this.#words, w, old, old | bit) === old) return true
    }
  }

  /** Gives `i` back; false when it was not taken. */
  release(i: number): boolean {
    if (!(i >= 0 && i < this.size)) return false
    const w = i >>> 5
    const bit = 1 << (i & 31)
    for (;;) {
      const old = Atomics.load(this.#words, w)
      if ((old & bit) === 0) return false
      if (Atomics.compareExchange(this.#words, w, old, old & ~bit) === old) return true
    }
  }

  /**
   * Takes a free member of [from, to), looking from `start` up to `to` and then from `from` up to `start` (upstream's
   * random scan within a band); -1 when every member of the band is taken.
   */
  takeIn(from: number, to: number, start: number): number {
    if (to > this.size) to = this.size
    if (from >= to) return -1
    if (start < from || start >= to) start = from
    const a = this.#scan(start, to)
    return a >= 0 ? a : this.#scan(from, start)
  }

  #scan(lo: number, hi: number): number {
    let p = lo
    while (p < hi) {
      const w = p >>> 5
      const word = Atomics.load(this.#words, w)
      if (word === FULL) { p = (w + 1) << 5; continue }
      const bit = 1 << (p & 31)
      if ((word & bit) !== 0) { p++; continue }
      if (Atomics.compareExchange(this.#words, w, word, word | bit) === word) return p
      // Another thread changed the word between the load and the exchange: look at the same member again.
    }
    return -1
  }

  /** How many members are taken. */
  count(): number {
    let n = 0
    for (let w = 0; w < this.#words.length; w++) {
      let x = Atomics.load(this.#words, w)
      while (x !== 0) { x &= x - 1; n++ }
    }
    return n
  }
}
