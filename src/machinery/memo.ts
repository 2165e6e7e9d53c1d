// A memo of a pure function of a string: parsed texts and derived values that clients send over and over.

/**
 * `fn` remembered by its argument. Arguments longer than `maxKey` are computed and not kept (a client's long texts
 * must not stay in memory); the memo is emptied when it holds `limit` of them (the hot few come back at once).
 */
export function memoize<T>(fn: (key: string) => T, limit: number, maxKey: number): (key: string) => T {
  const seen = new Map<string, T>()
  return (key) => {
    let v = seen.get(key)
    if (v === undefined && !seen.has(key)) {
      v = fn(key)
      if (key.length <= maxKey) {
        if (seen.size >= limit) seen.clear()
        seen.set(key, v)
      }
    }
    return v as T
  }
}
