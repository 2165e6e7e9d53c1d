import t from 'tap'
import { createHash } from 'node:crypto'
import { Dealer, MAX_HASH_BITS, dealerProblem, flowHash, requiredEntropyBits } from '../../../actors/flow-control/dealer.js'

/** The upstream algorithm written directly with BigInt, as a cross-check of the limb arithmetic. */
function naiveDeal(hash: bigint, deck: number, hand: number): number[] {
  let v = BigInt.asUintN(64, hash)
  const r: number[] = []
  for (let i = 0; i < hand; i++) {
    const d = BigInt(deck - i)
    r.push(Number(v % d))
    v /= d
  }
  const out: number[] = []
  for (let i = 0; i < hand; i++) {
    let c = r[i]
    for (let j = i; j > 0; j--) if (c >= r[j - 1]) c++
    out.push(c)
  }
  return out
}

/** A deterministic 64-bit generator (splitmix64). */
function* random64(seed: bigint, n: number): Generator<bigint> {
  let x = seed
  for (let i = 0; i < n; i++) {
    x = BigInt.asUintN(64, x + 0x9e3779b97f4a7c15n)
    let z = x
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n)
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn)
    yield z ^ (z >> 31n)
  }
}

function permutations(deck: number, hand: number): number {
  let p = 1
  for (let i = 0; i < hand; i++) p *= deck - i
  return p
}

t.test('reference vectors (flow hash and deal)', async (t) => {
  const h1 = flowHash('global-default', 'alice')
  t.equal(h1, 0xf4de3bd42ccdf6b7n)
  t.same(new Dealer(128, 6).deal(h1), [55, 62, 126, 125, 105, 1])
  const h2 = flowHash('system-nodes', 'system:node:n1')
  t.equal(h2, 0x7c71ae117bf78d24n)
  t.same(new Dealer(64, 6).deal(h2), [36, 37, 40, 20, 55, 27])
})

t.test('flow hash is SHA-256 of name, NUL, distinguisher; first 8 bytes little-endian', async (t) => {
  for (const [fs, d] of [['catch-all', ''], ['kube-scheduler', 'default'], ['x', 'ünïcödé']]) {
    const digest = createHash('sha256').update(Buffer.concat([Buffer.from(fs, 'utf8'), Buffer.from([0]), Buffer.from(d, 'utf8')])).digest()
    let want = 0n
    for (let i = 7; i >= 0; i--) want = (want << 8n) | BigInt(digest[i])
    t.equal(flowHash(fs, d), want, `${fs}/${d}`)
  }
  t.not(flowHash('ab', 'c'), flowHash('a', 'bc'), 'the separator keeps (ab,c) and (a,bc) apart')
})

t.test('cards are distinct and in range', async (t) => {
  const shapes: Array<[number, number]> = [[1, 1], [2, 2], [8, 8], [64, 6], [128, 6], [16, 4], [512, 6], [10_000_000, 2], [1 << 26, 2], [3, 3], [1000, 6]]
  for (const [deck, hand] of shapes) {
    const d = new Dealer(deck, hand)
    let bad = 0
    for (const h of random64(BigInt(deck * 31 + hand), 2000)) {
      const cards = d.deal(h)
      if (cards.length !== hand || new Set(cards).size !== hand || cards.some((c) => !Number.isInteger(c) || c < 0 || c >= deck)) bad++
    }
    t.equal(bad, 0, `deck ${deck} hand ${hand}`)
  }
  const d = new Dealer(128, 6)
  for (const h of [0n, 1n, 0xffffffffffffffffn, 1n << 63n, (1n << 63n) - 1n]) {
    t.equal(new Set(d.deal(h)).size, 6, `edge hash ${h}`)
  }
})

t.test('the limb arithmetic equals the BigInt algorithm', async (t) => {
  const shapes: Array<[number, number]> = [[64, 6], [128, 6], [16, 4], [1 << 26, 2], [1_000_003, 3], [2, 1], [7, 7]]
  for (const [deck, hand] of shapes) {
    const d = new Dealer(deck, hand)
    let mismatches = 0
    for (const h of random64(BigInt(deck + hand * 1000), 3000)) if (d.deal(h).join() !== naiveDeal(h, deck, hand).join()) mismatches++
    t.equal(mismatches, 0, `deck ${deck} hand ${hand}`)
  }
  t.same(new Dealer(128, 6).deal(12345), new Dealer(128, 6).deal(12345n), 'number and bigint hashes agree')
})

t.test('small decks: every possible hand appears (full coverage)', async (t) => {
  const shapes: Array<[number, number]> = [[1, 1], [2, 1], [2, 2], [3, 2], [4, 2], [4, 4], [5, 3], [6, 3], [7, 2], [8, 4], [9, 3]]
  for (const [deck, hand] of shapes) {
    const d = new Dealer(deck, hand)
    const n = permutations(deck, hand)
    const ordered = new Set<string>()
    const unordered = new Set<string>()
    for (let h = 0; h < n; h++) {
      const cards = d.deal(h)
      ordered.add(cards.join(','))
      unordered.add([...cards].sort((a, b) => a - b).join(','))
    }
    t.equal(ordered.size, n, `deck ${deck} hand ${hand}: the first ${n} hashes give all ${n} ordered hands`)
    let combos = 1
    for (let i = 0; i < hand; i++) combos = (combos * (deck - i)) / (i + 1)
    t.equal(unordered.size, Math.round(combos), `deck ${deck} hand ${hand}: all ${Math.round(combos)} card sets appear`)
    // Only hash mod (deck)_(hand) matters: higher hash bits do not change the hand.
    for (const h of random64(BigInt(deck * 100 + hand), 50)) t.same(d.deal(h), d.deal(h % BigInt(n)), `hash ${h} mod ${n}`)
  }
})

t.test('every card is dealt about equally often', async (t) => {
  const d = new Dealer(16, 4)
  const counts = new Array<number>(16).fill(0)
  for (const h of random64(42n, 40_000)) for (const c of d.deal(h)) counts[c]++
  const expected = (40_000 * 4) / 16
  for (const c of counts) t.ok(Math.abs(c - expected) < expected * 0.05, `count ${c} near ${expected}`)
})

t.test('dealInto reuses the given array', async (t) => {
  const d = new Dealer(64, 6)
  const hand = new Array<number>(6)
  t.equal(d.dealInto(99n, hand), hand)
  t.same(hand, d.deal(99n))
})

t.test('entropy bits and dealer constraints', async (t) => {
  t.equal(MAX_HASH_BITS, 60)
  t.equal(requiredEntropyBits(64, 6), 36)
  t.equal(requiredEntropyBits(128, 6), 42)
  t.equal(requiredEntropyBits(512, 8), 72)
  t.equal(requiredEntropyBits(1, 1), 0)
  t.equal(dealerProblem(128, 6), undefined)
  t.equal(dealerProblem(0, 1), 'deckSize 0 or handSize 1 is not positive')
  t.equal(dealerProblem(4, 0), 'deckSize 4 or handSize 0 is not positive')
  t.equal(dealerProblem(7, 8), 'handSize 8 is greater than deckSize 7')
  t.equal(dealerProblem((1 << 26) + 1, 1), `deckSize ${(1 << 26) + 1} is impractically large`)
  t.equal(dealerProblem(512, 8), 'required entropy bits of deckSize 512 and handSize 8 is greater than 60')
  t.throws(() => new Dealer(512, 8), RangeError)
  t.throws(() => new Dealer(4, 5), RangeError)
})
