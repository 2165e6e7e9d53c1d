// Test helpers for black-box tests that wait on the server's controllers.
import type { Reply } from './server.js'

/**
 * Polls `check` until it returns true or the deadline passes; returns whether it became true. Every 25 ms: a check is
 * one cheap request, and what the tests wait for (a controller's write, a watch event) mostly lands within tens of ms.
 */
export async function eventually(check: () => Promise<boolean>, ms = 10_000, every = 25): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, every))
  }
}

/** The created object of a 201 answer; anything else throws with the answer. */
export async function created(r: Reply, what: string): Promise<any> {
  if (r.status !== 201) throw new Error(`create ${what}: ${r.status} ${r.text}`)
  return r.json
}
