// The data of ConfigMaps and Secrets: key rules, the 1 MiB cap, the type-specific keys of Secrets, `immutable`, and
// `stringData` folded into `data` (upstream's core validation and the v1 conversion of Secrets).
import { isDeepStrictEqual } from 'node:util'
import { fieldForbidden, fieldInvalid, fieldRequired, fieldTooLong, type FieldError } from '../../../machinery/errors.js'
import type { Obj } from '../../define.js'

/** The cap on a ConfigMap's or Secret's data, all keys together (bytes). */
const MAX_DATA_BYTES = 1024 * 1024
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/
const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
const IMMUTABLE_SET = 'field is immutable when `immutable` is set'

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const keysOf = (v: unknown): string[] => (isMap(v) ? Object.keys(v) : [])
const base64Bytes = (v: unknown): number => (typeof v === 'string' ? Buffer.from(v, 'base64').length : 0)

/** The problems of one data key (upstream IsConfigMapKey). */
export function configKeyErrors(key: string): string[] {
  const out: string[] = []
  if (key.length > 253) out.push('must be no more than 253 characters')
  if (!CONFIG_KEY.test(key)) out.push(CONFIG_KEY_MSG)
  if (key === '.') out.push("must not be '.'")
  else if (key === '..') out.push("must not be '..'")
  else if (key.startsWith('..')) out.push("must not start with '..'")
  return out
}

function keyErrors(bag: string, m: unknown): FieldError[] {
  const errs: FieldError[] = []
  for (const k of keysOf(m)) for (const msg of configKeyErrors(k)) errs.push(fieldInvalid(`${bag}[${k}]`, k, msg))
  return errs
}

/** Empty and absent maps are the same data (the stored form omits empty maps). */
const sameData = (a: unknown, b: unknown): boolean => (keysOf(a).length === 0 && keysOf(b).length === 0) || isDeepStrictEqual(a, b)

export function validateConfigMap(o: Obj): FieldError[] {
  const errs = [...keyErrors('data', o.data), ...keyErrors('binaryData', o.binaryData)]
  let size = 0
  for (const k of keysOf(o.data)) {
    if (isMap(o.binaryData) && Object.prototype.hasOwnProperty.call(o.binaryData, k)) errs.push(fieldInvalid(`data[${k}]`, k, 'duplicate of key present in binaryData'))
    const v = o.data[k]
    size += typeof v === 'string' ? Buffer.byteLength(v) : 0
  }
  for (const k of keysOf(o.binaryData)) size += base64Bytes(o.binaryData[k])
  if (size > MAX_DATA_BYTES) errs.push(fieldTooLong('', MAX_DATA_BYTES))
  return errs
}

export function validateConfigMapUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  if (old.immutable === true) {
    if (o.immutable !== true) errs.push(fieldForbidden('immutable', IMMUTABLE_SET))
    if (!sameData(o.data, old.data)) errs.push(fieldForbidden('data', IMMUTABLE_SET))
    if (!sameData(o.binaryData, old.binaryData)) errs.push(fieldForbidden('binaryData', IMMUTABLE_SET))
  }
  return [...errs, ...validateConfigMap(o)]
}

/** The keys a Secret of a well-known type must carry (upstream ValidateSecret). */
function typeErrors(o: Obj): FieldError[] {
  const data = isMap(o.data) ? o.data : {}
  const has = (k: string) => Object.prototype.hasOwnProperty.call(data, k)
  const jsonKey = (k: string): FieldError[] => {
    if (!has(k)) return [fieldRequired(`data[${k}]`, '')]
    try { JSON.parse(Buffer.from(String(data[k]), 'base64').toString('utf8')) } catch (err) {
      return [fieldInvalid(`data[${k}]`, '<secret contents redacted>', (err as Error).message)]
    }
    return []
  }
  // The well-known types under either spelling: the brand's (orch.io/...) and upstream's (kubernetes.io/...).
  const type = typeof o.type === 'string' ? o.type : ''
  const brand = type.startsWith('orch.io/') ? 'orch.io' : 'kubernetes.io'
  switch (type.replace(/^orch\.io\//, 'kubernetes.io/')) {
    case 'kubernetes.io/service-account-token': {
      const key = `${brand}/service-account.name`
      const name = isMap(o.metadata?.annotations) ? o.metadata.annotations[key] : undefined
      return typeof name === 'string' && name !== '' ? [] : [fieldRequired(`metadata.annotations[${key}]`, '')]
    }
    case 'kubernetes.io/dockercfg': return jsonKey('.dockercfg')
    case 'kubernetes.io/dockerconfigjson': return jsonKey('.dockerconfigjson')
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [fieldRequired('data[username]', ''), fieldRequired('data[password]', '')]
    case 'kubernetes.io/ssh-auth':
      return base64Bytes(data['ssh-privatekey']) > 0 ? [] : [fieldRequired('data[ssh-privatekey]', '')]
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [fieldRequired('data[tls.crt]', '')]), ...(has('tls.key') ? [] : [fieldRequired('data[tls.key]', '')])]
    default: return []
  }
}

export function validateSecret(o: Obj): FieldError[] {
  const errs = keyErrors('data', o.data)
  let size = 0
  for (const k of keysOf(o.data)) size += base64Bytes(o.data[k])
  if (size > MAX_DATA_BYTES) errs.push(fieldTooLong('data', MAX_DATA_BYTES))
  return [...errs, ...typeErrors(o)]
}

export function validateSecretUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = []
  if ((o.type ?? '') !== (old.type ?? '')) errs.push(fieldInvalid('type', o.type ?? '', 'field is immutable'))
  if (old.immutable === true) {
    if (o.immutable !== true) errs.push(fieldForbidden('immutable', IMMUTABLE_SET))
    if (!sameData(o.data, old.data)) errs.push(fieldForbidden('data', IMMUTABLE_SET))
  }
  return [...errs, ...validateSecret(o)]
}

/** `stringData` is write-only: its values replace those of `data` under the same keys, base64-encoded, and it is never stored. */
export function foldStringData(o: Obj): void {
  if (!isMap(o.stringData)) { delete o.stringData; return }
  const data: Record<string, unknown> = isMap(o.data) ? o.data : {}
  for (const [k, v] of Object.entries(o.stringData)) data[k] = Buffer.from(typeof v === 'string' ? v : String(v), 'utf8').toString('base64')
  if (Object.keys(data).length > 0) o.data = data
  delete o.stringData
}
