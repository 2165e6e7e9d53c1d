// Polling for a condition a black-box test cannot be told about (a controller's write, a queue's state).

/** Calls `fn` every `every` ms until it returns something other than undefined; throws naming `what` after `ms`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000, every = 100): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, every))
  }
}
