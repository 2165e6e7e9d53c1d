// Feature gates: the spec's gate table with stages and defaults, and --feature-gates parsing.

export type Stage = 'alpha' | 'beta' | 'ga' | 'deprecated'

interface Gate { stage: Stage; default: boolean; /** GA or deprecated gates cannot be turned against their locked value */ locked?: boolean }

/** The gates spec 1 names, with their stage and default in release 1.35. */
export const GATES: Record<string, Gate> = {
  APIResponseCompression: { stage: 'beta', default: true },
  ListFromCacheSnapshot: { stage: 'beta', default: true },
  CBORServingAndStorage: { stage: 'alpha', default: false },
  AllowUnsafeMalformedObjectDeletion: { stage: 'alpha', default: false },
  DeclarativeValidation: { stage: 'beta', default: true },
  DeclarativeValidationTakeover: { stage: 'beta', default: false },
  /** --requestheader-uid-headers (alpha 1.32, beta 1.33) */
  RemoteRequestHeaderUID: { stage: 'beta', default: true },
  /** a client certificate's subject UID element (OID 1.3.6.1.4.1.57683.2) is the user's UID (beta 1.33) */
  AllowParsingUserUIDFromCertAuth: { stage: 'beta', default: true },
}

export type FeatureGates = Record<string, boolean>

export class FeatureGateError extends Error {}

/** Parses `Name=true,Other=false`; unknown gates and bad values throw; returns the gates and the warnings to log. */
export function parseFeatureGates(spec: string): { gates: FeatureGates; warnings: string[] } {
  const gates: FeatureGates = {}
  for (const [k, g] of Object.entries(GATES)) gates[k] = g.default
  const warnings: string[] = []
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=')
    if (eq < 0) throw new FeatureGateError(`missing bool value for ${part}`)
    const name = part.slice(0, eq).trim()
    const raw = part.slice(eq + 1).trim()
    const g = GATES[name]
    if (!g) throw new FeatureGateError(`unrecognized feature gate: ${name}`)
    if (raw !== 'true' && raw !== 'false') throw new FeatureGateError(`invalid value of ${name}=${raw}: must be true or false`)
    const v = raw === 'true'
    if (g.locked && v !== g.default) throw new FeatureGateError(`cannot set feature gate ${name} to ${v}, feature is locked to ${g.default}`)
    if (g.stage === 'ga') warnings.push(`Setting GA feature gate ${name}=${v}. It will be removed in a future release.`)
    if (g.stage === 'deprecated') warnings.push(`Setting deprecated feature gate ${name}=${v}. It will be removed in a future release.`)
    gates[name] = v
  }
  // Disabling DeclarativeValidation implicitly disables the takeover.
  if (!gates.DeclarativeValidation) gates.DeclarativeValidationTakeover = false
  return { gates, warnings }
}
