// upstream's CEL `format` library: `format.dns1123Label().validate(s)` is an optional list of problems (none when
// the string has the format); `format.named("x")` the named format, or none for a name the library does not know.
import { Optional, type Environment } from '@marcbachmann/cel-js'
import { dns1035Label, dns1123Label, dns1123Subdomain, labelValue, qualifiedName } from './validation.js'

/** A named format (upstream's kubernetes.NamedFormat). */
export class CelNamedFormat {
  constructor(readonly name: string, readonly check: (s: string) => string[]) {}
}
/** The `format` constant the library's functions hang off. */
export class CelFormatLibrary {}

/** A trailing '-' is allowed in a prefix (a name to which a suffix is appended), as upstream masks it. */
const prefix = (f: (s: string) => string[]) => (s: string): string[] => f(s.endsWith('-') ? `${s.slice(0, -1)}a` : s)

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

function validDate(y: string, m: string, d: string): boolean {
  const mm = Number(m), dd = Number(d)
  if (mm < 1 || mm > 12 || dd < 1) return false
  return dd <= new Date(Date.UTC(Number(y), mm, 0)).getUTCDate()
}

function uri(s: string): string[] {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path.
  if (s.startsWith('/')) return []
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) {
    try { new URL(s); return [] } catch { return [`invalid URI: parse ${JSON.stringify(s)}: invalid URI`] }
  }
  return [`invalid URI: parse ${JSON.stringify(s)}: invalid URI for request`]
}

const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label,
  dns1123Subdomain,
  dns1035Label,
  qualifiedName,
  dns1123LabelPrefix: prefix(dns1123Label),
  dns1123SubdomainPrefix: prefix(dns1123Subdomain),
  dns1035LabelPrefix: prefix(dns1035Label),
  labelValue,
  uri,
  uuid: (s) => UUID.test(s) ? [] : ['does not match the UUID format'],
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ['invalid base64'],
  date: (s) => { const m = DATE.exec(s); return m !== null && validDate(m[1], m[2], m[3]) ? [] : ['invalid date'] },
  datetime: (s) => {
    const m = DATETIME.exec(s)
    return m !== null && validDate(m[1], m[2], m[3]) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60 ? [] : ['invalid datetime']
  },
}

const named = new Map(Object.entries(FORMATS).map(([n, f]) => [n, new CelNamedFormat(n, f)]))

/** Registers the library (its types, the `format` constant and the functions) in an environment. */
export function registerFormatLibrary(env: Environment): void {
  env.registerType('kubernetes.NamedFormat', CelNamedFormat as never)
  env.registerType('kubernetes.FormatLibrary', CelFormatLibrary as never)
  env.registerConstant('format', 'kubernetes.FormatLibrary', new CelFormatLibrary())
  for (const [name, f] of named) env.registerFunction(`kubernetes.FormatLibrary.${name}(): kubernetes.NamedFormat`, () => f)
  env.registerFunction('kubernetes.FormatLibrary.named(string): optional<kubernetes.NamedFormat>', (_: CelFormatLibrary, n: string) => {
    const f = named.get(n)
    return f === undefined ? Optional.none() : Optional.of(f)
  })
  env.registerFunction('kubernetes.NamedFormat.validate(string): optional<list<string>>', (f: CelNamedFormat, s: string) => {
    const problems = f.check(s)
    return problems.length === 0 ? Optional.none() : Optional.of(problems)
  })
}
