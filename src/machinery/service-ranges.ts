// The service cluster IP range and node port range of kube-apiserver's --service-cluster-ip-range and
// --service-node-port-range: parsing, the members of each allocation map, and the band dynamic allocation prefers.
import { isIPv4Bytes, parseCidrSloppy, parseIPSloppy } from './validation.js'

/**
 * An IPv4 service range. Member i of its allocation map is the address `base + i`: the network address is never a
 * member, nor the broadcast address; member 0 (the first address) is the API server's own Service's.
 */
export interface ServiceIPRange {
  /** The range as upstream prints it (the masked network): `10.0.0.0/24`. */
  cidr: string
  /** The network address, as an unsigned 32-bit number. */
  network: number
  /** The first usable address (the network address + 1). */
  base: number
  /** How many addresses are members. */
  max: number
  /** Dynamic allocation takes members from [offset, max) first, then from [0, offset) (KEP-3070). */
  offset: number
}

export interface NodePortRange {
  base: number
  size: number
  /** Dynamic allocation takes ports from [base+offset, base+size) first, then below (KEP-3668). */
  offset: number
  /** As upstream prints it: `30000-32767`. */
  text: string
}

/** upstream's default --service-cluster-ip-range. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24'
/** upstream's default --service-node-port-range. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767'

/** The most host bits the allocation map of an IPv4 range may cover (upstream's maxCIDRBits). */
const MAX_CIDR_BITS = 20

/** A dotted IPv4 address as a number; undefined when it is not one (leading zeros are read as decimal, as Go's sloppy parse). */
export function ipv4Number(s: string): number | undefined {
  const b = parseIPSloppy(s)
  if (b === undefined || !isIPv4Bytes(b)) return undefined
  return ((b[12] << 24) >>> 0) + (b[13] << 16) + (b[14] << 8) + b[15]
}

export function ipv4String(n: number): string {
  return `${(n >>> 24) & 0xff}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`
}

/**
 * The range of --service-cluster-ip-range (one IPv4 CIDR); throws an Error whose message says what is wrong with it.
 * An empty value is upstream's default.
 */
export function parseServiceIPRange(value: string): ServiceIPRange {
  const v = value.trim() === '' ? DEFAULT_SERVICE_CLUSTER_IP_RANGE : value.trim()
  if (v.includes(',')) throw new Error('this server allocates from one IPv4 range; dual-stack ranges are not supported')
  const c = parseCidrSloppy(v)
  if (c === undefined) throw new Error('service-cluster-ip-range[0] is not a valid cidr')
  if (!c.v4) throw new Error('this server allocates from one IPv4 range; IPv6 ranges are not supported')
  const hostBits = 32 - c.maskLen
  if (hostBits > MAX_CIDR_BITS) throw new Error(`specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= ${32 - MAX_CIDR_BITS}`)
  const size = 2 ** hostBits
  if (size < 8) throw new Error('the service cluster IP range must be at least 8 IP addresses')
  const network = ((c.net[12] << 24) >>> 0) + (c.net[13] << 16) + (c.net[14] << 8) + c.net[15]
  return { cidr: `${ipv4String(network)}/${c.maskLen}`, network, base: network + 1, max: size - 2, offset: rangeOffset(size, 16, 256, 16) }
}

/** `min(max(min, size/step), max)`, 0 for a range of `min` or fewer: upstream's split of static and dynamic bands. */
function rangeOffset(size: number, min: number, max: number, step: number): number {
  if (size <= min) return 0
  return Math.min(Math.max(min, Math.floor(size / step)), max)
}

/**
 * The range of --service-node-port-range as upstream's PortRange reads it: `30000-32767`, `30000+2767` or one port;
 * throws an Error naming what is wrong. An empty value is upstream's default.
 */
export function parseNodePortRange(value: string): NodePortRange {
  const v = value.trim() === '' ? DEFAULT_SERVICE_NODE_PORT_RANGE : value.trim()
  const num = (s: string): number => {
    if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`)
    return Number(s)
  }
  const hyphen = v.indexOf('-')
  const plus = v.indexOf('+')
  let low: number
  let high: number
  if (hyphen < 0 && plus < 0) {
    low = high = num(v)
  } else if (hyphen >= 0 && plus < 0) {
    low = num(v.slice(0, hyphen))
    high = num(v.slice(hyphen + 1))
  } else if (plus >= 0 && hyphen < 0) {
    low = num(v.slice(0, plus))
    high = low + num(v.slice(plus + 1))
  } else {
    throw new Error(`unable to parse port range: ${v}`)
  }
  if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${v}`)
  if (high < low) throw new Error(`end port cannot be less than start port: ${v}`)
  if (low < 1) throw new Error(`the port range must start at 1 or above: ${v}`)
  const size = high - low + 1
  return { base: low, size, offset: rangeOffset(size, 16, 128, 32), text: `${low}-${high}` }
}
