// The simple JSONPath of printer columns and selectable fields (`.spec.replicas`, `.status.conditions[0].type`,
// `.items[*].name`, `.status.conditions[?(@.type=="Ready")].status`, `.metadata.labels.app\.orch\.io/name`).
type Step =
  | { k: 'field'; name: string }
  | { k: 'index'; i: number }
  | { k: 'all' }
  | { k: 'filter'; path: string[]; value: string }

export type JsonPath = Step[]

/** The steps of a path, or undefined when it is not of the simple form. `{...}` around it is accepted. */
export function parseJsonPath(text: string): JsonPath | undefined {
  let s = text.trim()
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1)
  if (s.startsWith('$')) s = s.slice(1)
  const out: Step[] = []
  let i = 0
  while (i < s.length) {
    const c = s[i]
    if (c === '.') {
      i++
      let name = ''
      while (i < s.length && s[i] !== '.' && s[i] !== '[') {
        if (s[i] === '\\' && i + 1 < s.length) { name += s[i + 1]; i += 2; continue }
        name += s[i++]
      }
      if (name === '') continue
      out.push(name === '*' ? { k: 'all' } : { k: 'field', name })
    } else if (c === '[') {
      const end = s.indexOf(']', i)
      if (end < 0) return undefined
      const inner = s.slice(i + 1, end).trim()
      i = end + 1
      if (inner === '*') out.push({ k: 'all' })
      else if (/^-?\d+$/.test(inner)) out.push({ k: 'index', i: Number(inner) })
      else if (/^'.*'$|^".*"$/.test(inner)) out.push({ k: 'field', name: inner.slice(1, -1) })
      else {
        const m = /^\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*(?:"([^"]*)"|'([^']*)'|(\S+))\)$/.exec(inner)
        if (!m) return undefined
        out.push({ k: 'filter', path: m[1].slice(1).split('.'), value: m[2] ?? m[3] ?? m[4] })
      }
    } else {
      return undefined
    }
  }
  return out
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Every value the path reaches in `root`, in order. */
export function evalJsonPath(path: JsonPath, root: unknown): unknown[] {
  let cur: unknown[] = [root]
  for (const step of path) {
    const next: unknown[] = []
    for (const v of cur) {
      switch (step.k) {
        case 'field': if (isObj(v) && v[step.name] !== undefined) next.push(v[step.name]); break
        case 'index': if (Array.isArray(v)) { const x = v[step.i < 0 ? v.length + step.i : step.i]; if (x !== undefined) next.push(x) } break
        case 'all': if (Array.isArray(v)) next.push(...v); else if (isObj(v)) next.push(...Object.values(v)); break
        case 'filter':
          if (Array.isArray(v)) {
            for (const x of v) {
              let y: unknown = x
              for (const p of step.path) y = isObj(y) ? y[p] : undefined
              if (y !== undefined && String(y) === step.value) next.push(x)
            }
          }
          break
      }
    }
    cur = next
  }
  return cur
}
