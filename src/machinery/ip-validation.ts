// IP addresses and CIDRs with upstream's rules and messages: the sloppy forms legacy fields accept (Go's pre-1.17
// ParseIP/ParseCIDR) and the strict ones of Go's netip.
import { fieldInvalid, type FieldError } from './errors.js'

// ---- CIDRs as Go's pre-1.17 net.ParseCIDR reads them (k8s.io/utils/net ParseCIDRSloppy) ----

/** A parsed CIDR: the masked network as 16 bytes (IPv4 as IPv4-mapped), its prefix length over those 16 bytes, and the prefix length as written. */
export interface Cidr { net: Uint8Array; bits: number; maskLen: number; v4: boolean }

function parseDecimal(s: string): number | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined
  const n = Number(s.length > 8 ? s.replace(/^0+(?=.)/, '') : s)
  return Number.isSafeInteger(n) && n < 0xffffff ? n : undefined
}

/** IPv4 with leading zeros allowed (read as decimal). */
function parseIPv4Sloppy(s: string): number[] | undefined {
  const parts = s.split('.')
  if (parts.length !== 4) return undefined
  const out: number[] = []
  for (const p of parts) {
    const n = parseDecimal(p)
    if (n === undefined || n > 255) return undefined
    out.push(n)
  }
  return out
}

function parseIPv6Sloppy(s: string): Uint8Array | undefined {
  const ip = new Uint8Array(16)
  let ellipsis = -1
  let i = 0
  let rest = s
  if (rest.startsWith('::')) { ellipsis = 0; rest = rest.slice(2); if (rest === '') return ip }
  while (i < 16) {
    const m = /^[0-9a-fA-F]+/.exec(rest)
    if (!m) return undefined
    // An embedded IPv4 address in the last 32 bits.
    if (rest.length > m[0].length && rest[m[0].length] === '.') {
      if (ellipsis < 0 && i !== 12) return undefined
      if (i + 4 > 16) return undefined
      const v4 = parseIPv4Sloppy(rest)
      if (!v4) return undefined
      ip.set(v4, i)
      i += 4
      rest = ''
      break
    }
    const digits = m[0].replace(/^0+(?=.)/, '')
    if (digits.length > 4) return undefined
    const n = parseInt(digits, 16)
    ip[i] = n >> 8; ip[i + 1] = n & 0xff
    i += 2
    rest = rest.slice(m[0].length)
    if (rest === '') break
    if (rest[0] !== ':' || rest.length === 1) return undefined
    rest = rest.slice(1)
    if (rest[0] === ':') {
      if (ellipsis >= 0) return undefined
      ellipsis = i
      rest = rest.slice(1)
      if (rest === '') break
    }
  }
  if (rest !== '') return undefined
  if (i < 16) {
    if (ellipsis < 0) return undefined
    const n = 16 - i
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0
  } else if (ellipsis >= 0) {
    return undefined
  }
  return ip
}

/** Go's (sloppy) ParseIP: the address as 16 bytes (IPv4 as IPv4-mapped), undefined when it is not an IP. */
export function parseIPSloppy(s: string): Uint8Array | undefined {
  const v4 = parseIPv4Sloppy(s)
  if (v4) { const b = new Uint8Array(16); b[10] = 0xff; b[11] = 0xff; b.set(v4, 12); return b }
  return s.includes(':') ? parseIPv6Sloppy(s) : undefined
}

/** Go's IP.To4() != nil: an IPv4 address, or an IPv4-mapped IPv6 one. */
export function isIPv4Bytes(ip: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false
  return ip[10] === 0xff && ip[11] === 0xff
}

/** upstream IsValidIP's text for what Go's ParseIP does not read. */
export const IP_ADDRESS_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'

/**
 * upstream IsValidIPForLegacyField while StrictIPCIDRValidation is off (its default through 1.35): anything Go's
 * ParseIP reads is accepted as written (leading zeros, IPv4-mapped, not canonical); only an unreadable one is refused.
 */
export function legacyIPErrors(field: string, v: string): FieldError[] {
  return parseIPSloppy(v) === undefined ? [fieldInvalid(field, v, IP_ADDRESS_MSG)] : []
}

/**
 * upstream ValidateNonSpecialIP (Endpoints, EndpointSlices): an address that makes sense as a destination, so not
 * unspecified, loopback, link-local or link-local multicast; an unreadable one is only said to be no IP.
 */
export function nonSpecialIPErrors(field: string, v: string): FieldError[] {
  const ip = parseIPSloppy(v)
  if (ip === undefined) return [fieldInvalid(field, v, 'must be a valid IP address')]
  const errs: FieldError[] = []
  const v4 = isIPv4Bytes(ip)
  if (v4 ? ip[12] === 0 && ip[13] === 0 && ip[14] === 0 && ip[15] === 0 : ip.every((b) => b === 0)) errs.push(fieldInvalid(field, v, `may not be unspecified (${v})`))
  if (v4 ? ip[12] === 127 : ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1) errs.push(fieldInvalid(field, v, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'))
  if (v4 ? ip[12] === 169 && ip[13] === 254 : ip[0] === 0xfe && (ip[1] & 0xc0) === 0x80) errs.push(fieldInvalid(field, v, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'))
  if (v4 ? ip[12] === 224 && ip[13] === 0 && ip[14] === 0 : ip[0] === 0xff && (ip[1] & 0x0f) === 0x02) errs.push(fieldInvalid(field, v, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'))
  return errs
}

/** Go's (sloppy) ParseCIDR: undefined when the value is not a CIDR. */
export function parseCidrSloppy(s: string): Cidr | undefined {
  const slash = s.indexOf('/')
  if (slash < 0) return undefined
  const addr = s.slice(0, slash)
  const mask = parseDecimal(s.slice(slash + 1))
  let bytes: Uint8Array | undefined
  let v4Notation = false
  const v4 = parseIPv4Sloppy(addr)
  if (v4) { bytes = new Uint8Array(16); bytes[10] = 0xff; bytes[11] = 0xff; bytes.set(v4, 12); v4Notation = true }
  else bytes = parseIPv6Sloppy(addr)
  if (!bytes || mask === undefined || mask > (v4Notation ? 32 : 128)) return undefined
  const bits = v4Notation ? mask + 96 : mask
  const net = new Uint8Array(16)
  for (let b = 0; b < 16; b++) {
    const keep = Math.max(0, Math.min(8, bits - b * 8))
    net[b] = bytes[b] & ((0xff << (8 - keep)) & 0xff)
  }
  const isV4 = net.slice(0, 10).every((x) => x === 0) && net[10] === 0xff && net[11] === 0xff
  return { net, bits, maskLen: mask, v4: isV4 }
}

/** Go's IPNet.Contains(ip) for a network and another CIDR's network address (families must agree). */
export function cidrContains(outer: Cidr, inner: Cidr): boolean {
  if (outer.v4 !== inner.v4) return false
  for (let b = 0; b < 16; b++) {
    const keep = Math.max(0, Math.min(8, outer.bits - b * 8))
    const m = (0xff << (8 - keep)) & 0xff
    if ((outer.net[b] & m) !== (inner.net[b] & m)) return false
  }
  return true
}

// ---- strict forms (Go's netip), as the CEL ip() and cidr() functions and the OpenAPI formats read them ----

/** IPv4 dotted quad without leading zeros (what Go's netip accepts). */
export function isIPv4(v: string): boolean {
  const parts = v.split('.')
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)
}

/** IPv6 in any of its textual forms (an embedded IPv4 tail allowed, no zone). */
export function isIPv6(v: string): boolean {
  if (v.includes('%') || !v.includes(':')) return false
  let head = v
  let groupsFromV4 = 0
  const lastColon = v.lastIndexOf(':')
  if (v.slice(lastColon + 1).includes('.')) {
    if (!isIPv4(v.slice(lastColon + 1))) return false
    head = v.slice(0, lastColon + 1) + '0:0'
    groupsFromV4 = 0
  }
  const dbl = head.split('::')
  if (dbl.length > 2) return false
  const group = /^[0-9a-fA-F]{1,4}$/
  const side = (s: string) => (s === '' ? [] : s.split(':'))
  const left = side(dbl[0])
  const right = dbl.length === 2 ? side(dbl[1]) : []
  if (![...left, ...right].every((g) => group.test(g))) return false
  const n = left.length + right.length + groupsFromV4
  return dbl.length === 2 ? n < 8 : n === 8
}

export function isIP(v: string): boolean { return isIPv4(v) || isIPv6(v) }

/** A CIDR: an address of either family and a prefix length within its size. */
export function isCIDR(v: string): boolean {
  const slash = v.indexOf('/')
  if (slash < 0) return false
  const ip = v.slice(0, slash)
  const bits = v.slice(slash + 1)
  if (!/^(0|[1-9]\d*)$/.test(bits)) return false
  if (isIPv4(ip)) return Number(bits) <= 32
  if (isIPv6(ip)) return Number(bits) <= 128
  return false
}
