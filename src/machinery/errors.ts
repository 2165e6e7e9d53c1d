// ApiError (the fields of a Status) and its named factories; FieldError and the Invalid message rules.

export type CauseType =
  | 'FieldValueNotFound' | 'FieldValueRequired' | 'FieldValueDuplicate' | 'FieldValueInvalid'
  | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueTooLong' | 'FieldValueTooMany'
  | 'InternalError' | 'FieldValueTypeInvalid' | 'FieldManagerConflict' | 'ResourceVersionTooLarge'

export interface StatusCause { reason?: string; message?: string; field?: string }

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

export interface FieldError {
  type: CauseType
  field: string
  value?: unknown
  detail?: string
  /** For NotSupported: the allowed values. */
  supported?: string[]
  /** For TooLong / TooMany: the limit. */
  max?: number
  /** `omit`: upstream leaves the value out of the message (Go's field.OmitValueType). */
  shown?: 'omit'
  /** A problem upstream already meets while decoding the body (the request is then 400, not 422). */
  decode?: boolean
}

export class ApiError extends Error {
  readonly code: number
  readonly reason: string
  readonly details: StatusDetails | undefined
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string> | undefined
  /** A plain-text body instead of a Status (404 page not found, 429 of max-in-flight). */
  readonly plainText: boolean
  /** The Status metadata.continue of a 410 with a fresh token. */
  continueToken: string | undefined

  constructor(code: number, reason: string, message: string, details?: StatusDetails, opts?: { headers?: Record<string, string>; plainText?: boolean }) {
    // No stack: an ApiError is an answer to the client, not a fault (a 500's cause keeps its own). Capturing one was
    // the largest cost of a 401, 404 or 409 (~12 µs of a 401's ~40 in a profile of rejected GETs).
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(message)
    Error.stackTraceLimit = limit
    this.code = code
    this.reason = reason
    this.details = details
    this.headers = opts?.headers
    this.plainText = opts?.plainText ?? false
    this.continueToken = undefined
  }

  toStatus(): Record<string, unknown> {
    const s: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: this.continueToken ? { continue: this.continueToken } : {}, status: 'Failure', message: this.message }
    // A Status a handler answered as it is (upstream's errors.FromObject) may have no reason: omitted, as Go's omitempty.
    if (this.reason !== '') s.reason = this.reason
    if (this.details !== undefined) s.details = this.details
    s.code = this.code
    return s
  }
}

/** A group/resource pair as error messages print it. */
export interface GR { group: string; resource: string }

function grString(gr: GR): string { return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}` }
function grDetails(gr: GR, name?: string): StatusDetails {
  const d: StatusDetails = {}
  if (name !== undefined && name !== '') d.name = name
  if (gr.group !== '') d.group = gr.group
  d.kind = gr.resource
  return d
}

export function notFound(gr: GR, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${grString(gr)} "${name}" not found`, grDetails(gr, name))
}

export function alreadyExists(gr: GR, name: string, generated = false): ApiError {
  if (generated) {
    return new ApiError(409, 'AlreadyExists', `${grString(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`, { ...grDetails(gr, name), retryAfterSeconds: 1 }, { headers: { 'Retry-After': '1' } })
  }
  return new ApiError(409, 'AlreadyExists', `${grString(gr)} "${name}" already exists`, grDetails(gr, name))
}

export const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again'

export function conflict(gr: GR, name: string, why: string = MODIFIED_CONFLICT): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${grString(gr)} "${name}": ${why}`, grDetails(gr, name))
}

/** The precondition form of Conflict names the Kind where the resource would be (upstream builds it from the GVK). */
export function preconditionConflict(group: string, kind: string, name: string, why: string): ApiError {
  return conflict({ group, resource: kind }, name, why)
}

export function forbidden(gr: GR | undefined, name: string, why: string): ApiError {
  if (gr === undefined) return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {})
  const subject = name === '' ? `${grString(gr)} is forbidden` : `${grString(gr)} "${name}" is forbidden`
  return new ApiError(403, 'Forbidden', `${subject}: ${why}`, grDetails(gr, name))
}

export function unauthorized(message = 'Unauthorized'): ApiError {
  return new ApiError(401, 'Unauthorized', message)
}

export function gone(message: string): ApiError { return new ApiError(410, 'Gone', message) }
export function expired(message: string): ApiError { return new ApiError(410, 'Expired', message) }
export function badRequest(message: string): ApiError { return new ApiError(400, 'BadRequest', message) }

export function methodNotAllowed(verb?: string, gr?: GR): ApiError {
  if (verb !== undefined && gr !== undefined) {
    const d: StatusDetails = {}
    if (gr.group !== '') d.group = gr.group
    d.kind = gr.resource
    return new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${grString(gr)}"`, d)
  }
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {})
}

export function notAcceptable(types: string[]): ApiError {
  return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${types.join(', ')}`)
}

export function unsupportedMediaType(types: string[]): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${types.join(', ')}`)
}

export const BODY_LIMIT = 3 * 1024 * 1024

export function entityTooLarge(limit = BODY_LIMIT): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`)
}

export function tooManyRequestsPlain(retryAfter = 1): ApiError {
  // Go's http.Error: the text plus a newline, nosniff.
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.\n', undefined, { headers: { 'Retry-After': String(retryAfter), 'X-Content-Type-Options': 'nosniff' }, plainText: true })
}

/**
 * upstream NewTooManyRequests as a Status (not the plain-text 429 of flow control): `Retry-After` goes with a
 * retryAfterSeconds above 0, as upstream's error writer adds it.
 */
export function tooManyRequests(message: string, retryAfterSeconds = 0, causes?: StatusCause[]): ApiError {
  const d: StatusDetails = {}
  if (causes) d.causes = causes
  if (retryAfterSeconds > 0) d.retryAfterSeconds = retryAfterSeconds
  return new ApiError(429, 'TooManyRequests', message, d, retryAfterSeconds > 0 ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : undefined)
}

/**
 * A failure Status a handler returns as its answer (upstream turns such a result into its error as it is): the code
 * and message it names, and its reason, which may be empty.
 */
export function statusFailure(code: number, message: string, reason = ''): ApiError {
  return new ApiError(code, reason, message)
}

export function timeout(text: string, retryAfterSeconds = 0, causes?: StatusCause[]): ApiError {
  const d: StatusDetails = {}
  if (causes) d.causes = causes
  if (retryAfterSeconds > 0) d.retryAfterSeconds = retryAfterSeconds
  return new ApiError(504, 'Timeout', `Timeout: ${text}`, d, retryAfterSeconds > 0 ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : undefined)
}

export function tooLargeResourceVersion(asked: number | string, current: number | string): ApiError {
  return timeout(`Too large resource version: ${asked}, current: ${current}`, 1, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }])
}

export function serviceUnavailable(message: string, retryAfterSeconds?: number): ApiError {
  const d: StatusDetails | undefined = retryAfterSeconds ? { retryAfterSeconds } : undefined
  return new ApiError(503, 'ServiceUnavailable', message, d, retryAfterSeconds ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : undefined)
}

export function internal(err: unknown): ApiError {
  const msg = err instanceof Error ? err.message : String(err)
  return new ApiError(500, 'InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] })
}

export function pageNotFound(): ApiError {
  return new ApiError(404, 'NotFound', '404 page not found', undefined, { plainText: true })
}

export function resourceNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {})
}

// ---- field errors and Invalid ----

/** Go's %q for a string (close enough: JSON escaping with the same quote). */
export function goQuote(s: string): string { return JSON.stringify(s) }

/**
 * A bad value that upstream prints in a form of its own — Go's %#v of a typed slice or struct such as
 * `[]networking.PolicyType{"Ingress", "Egress"}`, a time's String(): the text is printed as it is.
 */
export class GoValue {
  constructor(readonly text: string) {}
  toJSON(): string { return this.text }
}

/** `[]<type>{"a", "b"}`, Go's %#v of a slice of a string type. */
export function goStringSlice(type: string, items: unknown[]): GoValue {
  return new GoValue(`[]${type}{${items.map((x) => goQuote(String(x))).join(', ')}}`)
}

/** goStringSlice, or `[]<type>(nil)` for a value that is no list (an unset field). */
export function goStringSliceOrNil(type: string, v: unknown): GoValue {
  return Array.isArray(v) ? goStringSlice(type, v) : new GoValue(`[]${type}(nil)`)
}

/**
 * A pointer field as Go's %#v prints it inside a struct: `(*T)(nil)`, or an address when set. The address of a set
 * pointer cannot be known; a fixed one stands in for it.
 */
export function goPointer(type: string, v: unknown): string { return v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)` }

/** `[]byte{0x68, 0x69}`, Go's %#v of a byte slice (`[]byte(nil)` for none); `type` uint8 inside a struct's %#v. */
export function goByteSlice(b: Uint8Array | null, type = 'byte'): GoValue {
  if (b === null) return new GoValue(`[]${type}(nil)`)
  return new GoValue(`[]${type}{${Array.from(b, (x) => `0x${x.toString(16)}`).join(', ')}}`)
}

function printValue(v: unknown): string {
  if (v instanceof GoValue) return v.text
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'string') return goQuote(v)
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return JSON.stringify(v)
}

/** The body of a field error, without the field prefix (the cause's message). */
export function fieldErrorBody(e: FieldError): string {
  const tail = e.detail ? `: ${e.detail}` : ''
  if (e.shown === 'omit' && e.type === 'FieldValueInvalid') return `Invalid value${tail}`
  switch (e.type) {
    case 'FieldValueRequired': return `Required value${tail}`
    case 'FieldValueInvalid': return `Invalid value: ${printValue(e.value)}${tail}`
    case 'FieldValueTypeInvalid': return `Invalid value: ${printValue(e.value)}${tail}`
    case 'FieldValueNotSupported': return `Unsupported value: ${printValue(e.value)}${e.supported ? `: supported values: ${e.supported.map(goQuote).join(', ')}` : ''}`
    case 'FieldValueDuplicate': return `Duplicate value: ${printValue(e.value)}${tail}`
    case 'FieldValueForbidden': return `Forbidden${tail}`
    case 'FieldValueTooLong': return `Too long: may not be more than ${e.max} bytes`
    case 'FieldValueTooMany': return `Too many: ${printValue(e.value)}: must have at most ${e.max} items`
    case 'FieldValueNotFound': return `Not found: ${printValue(e.value)}`
    case 'InternalError': return `Internal error${tail}`
    default: return `${e.type}${tail}`
  }
}

export function invalid(groupKind: string, group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    const line = `${e.field}: ${fieldErrorBody(e)}`
    if (!seen.has(line)) { seen.add(line); lines.push(line) }
  }
  const agg = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`
  const details: StatusDetails = {}
  if (name !== '') details.name = name
  if (group !== '') details.group = group
  details.kind = kind
  details.causes = errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }))
  return new ApiError(422, 'Invalid', `${groupKind} "${name}" is invalid: ${agg}`, details)
}

export function fieldRequired(field: string, detail?: string): FieldError { return { type: 'FieldValueRequired', field, detail } }
export function fieldInvalid(field: string, value: unknown, detail?: string): FieldError { return { type: 'FieldValueInvalid', field, value, detail } }
export function fieldForbidden(field: string, detail?: string): FieldError { return { type: 'FieldValueForbidden', field, detail } }
export function fieldNotSupported(field: string, value: unknown, supported: string[]): FieldError { return { type: 'FieldValueNotSupported', field, value, supported } }
export function fieldTooLong(field: string, max: number): FieldError { return { type: 'FieldValueTooLong', field, max } }
/** An Invalid error whose value upstream prints in a form of its own (a Go struct's %#v, a Quantity's String()). */
export function fieldInvalidPrinted(field: string, printed: string, detail?: string): FieldError { return { type: 'FieldValueInvalid', field, value: new GoValue(printed), detail } }
export function fieldNotFound(field: string, value: unknown): FieldError { return { type: 'FieldValueNotFound', field, value } }
/** A Duplicate error; `detail`, when upstream sets one on the error, follows the value. */
export function fieldDuplicate(field: string, value: unknown, detail?: string): FieldError { return { type: 'FieldValueDuplicate', field, value, detail } }
export function fieldTooMany(field: string, count: number, max: number): FieldError { return { type: 'FieldValueTooMany', field, value: count, max } }
/** An Invalid error whose value upstream leaves out of the message (field.OmitValueType). */
export function fieldInvalidOmitted(field: string, detail: string): FieldError { return { type: 'FieldValueInvalid', field, detail, shown: 'omit' } }
