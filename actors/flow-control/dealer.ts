// Shuffle sharding (upstream k8s.io/apiserver/pkg/util/shufflesharding) and the APF flow hash.
import { createHash } from 'node:crypto'

/** Upstream MaxHashBits: the entropy a deal may consume from the 64-bit hash. */
export const MAX_HASH_BITS = 60
/** Upstream's practical limit on the deck size. */
export const MAX_DECK_SIZE = 1 << 26

/** ⌈log2(deckSize) · handSize⌉, the bits of hash a hand needs. */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize)
}

/** Why a deck/hand pair is unusable (upstream NewDealer's errors), or undefined when it is fine. */
export function dealerProblem(deckSize: number, handSize: number): string | undefined {
  if (!Number.isInteger(deckSize) || !Number.isInteger(handSize) || deckSize <= 0 || handSize <= 0) return `deckSize ${deckSize} or handSize ${handSize} is not positive`
  if (handSize > deckSize) return `handSize ${handSize} is greater than deckSize ${deckSize}`
  if (deckSize > MAX_DECK_SIZE) return `deckSize ${deckSize} is impractically large`
  if (requiredEntropyBits(deckSize, handSize) > MAX_HASH_BITS) return `required entropy bits of deckSize ${deckSize} and handSize ${handSize} is greater than ${MAX_HASH_BITS}`
  return undefined
}

const MASK16 = 0xffffn

/**
 * Deals `handSize` distinct cards out of `deckSize` from a 64-bit hash, exactly as upstream's Dealer.Deal: the hash
 * is read as a mixed-radix number (radices deckSize, deckSize-1, ...), then each digit is shifted past the digits
 * before it. The whole 64-bit value is used (no masking). Arithmetic runs on four 16-bit limbs so it stays within
 * double precision (deckSize ≤ 2^26 keeps every partial remainder below 2^42).
 */
export class Dealer {
  readonly deckSize: number
  readonly handSize: number
  readonly #remainders: number[]

  constructor(deckSize: number, handSize: number) {
    const problem = dealerProblem(deckSize, handSize)
    if (problem !== undefined) throw new RangeError(problem)
    this.deckSize = deckSize
    this.handSize = handSize
    this.#remainders = new Array<number>(handSize).fill(0)
  }

  /** The hand for a hash (a fresh array). */
  deal(hash: bigint | number): number[] {
    return this.dealInto(hash, new Array<number>(this.handSize))
  }

  /** Deals into `hand` (which must have room for handSize cards) and returns it. */
  dealInto(hash: bigint | number, hand: number[]): number[] {
    const h = BigInt.asUintN(64, typeof hash === 'bigint' ? hash : BigInt(hash))
    // Limbs, most significant first.
    let l3 = Number((h >> 48n) & MASK16)
    let l2 = Number((h >> 32n) & MASK16)
    let l1 = Number((h >> 16n) & MASK16)
    let l0 = Number(h & MASK16)
    const r = this.#remainders
    for (let i = 0; i < this.handSize; i++) {
      const d = this.deckSize - i
      let rem = l3
      l3 = Math.floor(rem / d); rem = (rem - l3 * d) * 65536 + l2
      l2 = Math.floor(rem / d); rem = (rem - l2 * d) * 65536 + l1
      l1 = Math.floor(rem / d); rem = (rem - l1 * d) * 65536 + l0
      l0 = Math.floor(rem / d); rem -= l0 * d
      r[i] = rem
    }
    for (let i = 0; i < this.handSize; i++) {
      let card = r[i]
      for (let j = i; j > 0; j--) if (card >= r[j - 1]) card++
      hand[i] = card
    }
    return hand
  }
}

/**
 * The flow id hash of upstream hashFlowID: SHA-256 over `flowSchemaName || 0x00 || distinguisher`, the first 8
 * bytes of the digest read as a little-endian uint64.
 */
export function flowHash(flowSchemaName: string, distinguisher: string): bigint {
  const digest = createHash('sha256').update(flowSchemaName, 'utf8').update(ZERO).update(distinguisher, 'utf8').digest()
  return digest.readBigUInt64LE(0)
}

const ZERO = Buffer.from([0])
