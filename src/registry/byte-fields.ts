// Which fields of a kind hold bytes (schema `format: byte`, base64 text in JSON): binary encodings write them as bytes.
import type { BytePath } from '../machinery/codecs/cbor.js'
import { loadDefinitions, type SchemaNode } from './schema.js'

const REF_PREFIX = '#/definitions/'

let byGvk: Map<string, string> | undefined
const cache = new Map<string, readonly BytePath[] | undefined>()

/** `group/version/kind` → definition name, for every kind the schema data names. */
function kindIndex(): Map<string, string> {
  if (byGvk) return byGvk
  byGvk = new Map()
  for (const [name, s] of Object.entries(loadDefinitions())) {
    const gvks = s['x-orch-group-version-kind']
    if (!Array.isArray(gvks)) continue
    for (const g of gvks) byGvk.set(`${g.group ?? ''}/${g.version}/${g.kind}`, name)
  }
  return byGvk
}

function refOf(s: SchemaNode): string | undefined {
  if (typeof s.$ref === 'string' && s.$ref.startsWith(REF_PREFIX)) return s.$ref.slice(REF_PREFIX.length)
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return refOf(s.allOf[0])
  return undefined
}

/** Byte fields under a schema node; `seen` stops at definitions already on the path (recursive types). */
function walk(s: SchemaNode | undefined, path: string[], out: string[][], seen: Set<string>): void {
  if (!s || typeof s !== 'object') return
  const ref = refOf(s)
  if (ref !== undefined) {
    if (seen.has(ref)) return
    seen.add(ref)
    walk(loadDefinitions()[ref], path, out, seen)
    seen.delete(ref)
    return
  }
  if (s.type === 'string' && s.format === 'byte') { out.push([...path]); return }
  if (s.properties) for (const [k, v] of Object.entries(s.properties as Record<string, SchemaNode>)) walk(v, [...path, k], out, seen)
  if (s.additionalProperties && typeof s.additionalProperties === 'object') walk(s.additionalProperties, [...path, '*'], out, seen)
  if (s.items && typeof s.items === 'object') walk(s.items, [...path, '*'], out, seen)
}

/**
 * The byte fields of the kind of an object, by its apiVersion and kind (the upstream `.k8s.io` spelling of a group is
 * ours); undefined for kinds without any. Computed once per kind.
 */
export function byteFieldsOf(apiVersion: string, kind: string): readonly BytePath[] | undefined {
  const key = `${apiVersion}/${kind}`
  if (cache.has(key)) return cache.get(key)
  const slash = apiVersion.lastIndexOf('/')
  const group = slash < 0 ? '' : apiVersion.slice(0, slash).replace(/\.k8s\.io$/, '.orch.io')
  const version = apiVersion.slice(slash + 1)
  const name = kindIndex().get(`${group}/${version}/${kind}`)
  let paths: string[][] | undefined
  if (name !== undefined) {
    const out: string[][] = []
    walk(loadDefinitions()[name], [], out, new Set([name]))
    if (out.length > 0) paths = out
  }
  cache.set(key, paths)
  return paths
}
