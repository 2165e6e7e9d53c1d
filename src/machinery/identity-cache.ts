// Per-identity caches of decisions about requests (authorization, APF classification): filed first by the identity's
// groups array, then by a key of the request's attributes, bounded, dropped whole when what they depend on changes.

/**
 * The authenticator hands out one user object per token, so one groups array per identity: its identity files a
 * request's entries without building or hashing the groups' text. Arrays made per request (impersonation) fall back
 * to their text, so equal identities share entries. The key must still name the user (arrays can be shared).
 */
export class IdentityCache<V> {
  #byGroups = new WeakMap<readonly string[], Map<string, V>>()
  #byText = new Map<string, Map<string, V>>()
  #size = 0
  readonly #limit: number

  constructor(limit: number) { this.#limit = limit }

  /** The entries of an identity, made on first use; read them with get, add to them with set. */
  entries(groups: readonly string[]): Map<string, V> {
    let m = this.#byGroups.get(groups)
    if (m === undefined) {
      const text = groups.join('\u0001')
      m = this.#byText.get(text)
      if (m === undefined) { m = new Map(); this.#byText.set(text, m) }
      this.#byGroups.set(groups, m)
    }
    return m
  }

  /** Adds an entry; at the limit everything is dropped instead (the next requests fill it again). */
  set(entries: Map<string, V>, key: string, value: V): void {
    if (this.#size >= this.#limit) { this.clear(); return }
    entries.set(key, value)
    this.#size++
  }

  clear(): void {
    this.#byGroups = new WeakMap()
    this.#byText.clear()
    this.#size = 0
  }
}
