// The set of JWT authenticators a front-end runs, and its life: built from the --oidc-* flags or the
// --authentication-config file (validated at start by the main thread), reloaded in every front-end when the file changes.
import { readFileSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'
import {
  aggregateText, ALLOWED_SIGNING_ALGS, configFromFlags, decodeAuthenticationConfiguration, validateAuthenticationConfiguration,
  type AuthenticationConfiguration, type CompiledJwt,
} from './jwt-config.js'
import { goQ, JwtAuthenticator, untrustedIssuer, type JwtResult } from './jwt.js'

export class JwtAuthenticators {
  #byIssuer = new Map<string, JwtAuthenticator>()
  constructor(readonly list: JwtAuthenticator[]) {
    for (const a of list) this.#byIssuer.set(a.c.url, a)
  }
  get size(): number { return this.list.length }
  /** undefined: no authenticator of this token's issuer (the other authenticators decide). */
  authenticate(token: string): Promise<JwtResult> | undefined {
    if (this.#byIssuer.size === 0) return undefined
    const u = untrustedIssuer(token)
    if (u === undefined) return undefined
    const a = this.#byIssuer.get(u.iss)
    return a === undefined ? undefined : a.authenticate(token, u.payload)
  }
  close(): void { for (const a of this.list) a.close() }
}

/** What a front-end gets to build its authenticators: the flags' configuration, or the file's path and its text at start. */
export interface JwtSetup {
  /** the --authentication-config path ('' with flags) */
  file: string
  /** the configuration validated at start (the file's text, or the flags' configuration as JSON) */
  text: string
  /** --oidc-signing-algs; with a file, every allowed algorithm */
  algs: string[]
  /** the service-account issuers a JWT issuer may not equal */
  disallowedIssuers: string[]
  /** the file's `anonymous` section (in place of --anonymous-auth); it may not change on reload */
  anonymous?: { enabled: boolean; paths: string[] }
}

/** The load and validation upstream does at start and on reload; the error names what failed as upstream does. */
export function loadJwtConfiguration(text: string, disallowed: string[]): { ok: true; jwt: CompiledJwt[]; config: AuthenticationConfiguration; anonymous: JwtSetup['anonymous'] } | { ok: false; error: string; load: boolean } {
  let config: AuthenticationConfiguration
  try { config = decodeAuthenticationConfiguration(text) } catch (err) { return { ok: false, error: (err as Error).message, load: true } }
  const v = validateAuthenticationConfiguration(config, disallowed)
  if (v.errors.length > 0) return { ok: false, error: `invalid authentication configuration: ${aggregateText(v.errors)}`, load: false }
  return { ok: true, jwt: v.jwt, config, anonymous: v.anonymous }
}

/** How often the file is read again besides change events (upstream filesystem.WatchUntil polls every minute). */
const RELOAD_POLL_MS = 60_000

/**
 * The authenticators of one thread, from the setup; with a file, watched: a changed file that loads and validates is
 * swapped in once each of its issuers is initialized (upstream waits for its health check, up to a minute, and retries
 * on the next change or poll); an invalid file keeps the old configuration and logs why.
 */
export class JwtController {
  current: JwtAuthenticators
  #tracked: string
  #watcher: FSWatcher | undefined
  #poll: NodeJS.Timeout | undefined
  #pending: JwtAuthenticators | undefined
  #pendingText = ''
  #debounce: NodeJS.Timeout | undefined

  constructor(readonly setup: JwtSetup, readonly log: Logger, readonly onSwap: (a: JwtAuthenticators) => void) {
    const first = setup.file === ''
      ? validateAuthenticationConfiguration(JSON.parse(setup.text) as AuthenticationConfiguration, setup.disallowedIssuers).jwt
      : (() => { const r = loadJwtConfiguration(setup.text, setup.disallowedIssuers); return r.ok ? r.jwt : [] })()
    this.current = new JwtAuthenticators(first.map((c) => new JwtAuthenticator(c, setup.algs, log)))
    this.#tracked = setup.text
    if (setup.file !== '') this.#watch()
  }

  #watch(): void {
    const file = this.setup.file
    try {
      // The directory: an editor or a ConfigMap mount replaces the file (rename), which a watch of the file itself misses.
      this.#watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || name === basename(file) || name.startsWith('..')) this.#schedule()
      })
      this.#watcher.on('error', (err) => this.log.error({ err: err.message, file }, 'watching authentication config file'))
    } catch (err) {
      this.log.error({ err: (err as Error).message, file }, 'watching authentication config file')
    }
    this.#poll = setInterval(() => this.#check(), RELOAD_POLL_MS)
    this.#poll.unref()
  }

  #schedule(): void {
    if (this.#debounce) clearTimeout(this.#debounce)
    this.#debounce = setTimeout(() => this.#check(), 100)
    this.#debounce.unref()
  }

  #check(): void {
    // Runs from timers and watch events of a front-end thread: nothing may escape.
    try { this.#reload() } catch (err) { this.log.error({ err: (err as Error).message, file: this.setup.file }, 'failed to update authentication config') }
  }

  #reload(): void {
    const file = this.setup.file
    let text: string
    try { text = readFileSync(file, 'utf8') } catch (err) {
      this.log.error({ err: (err as Error).message, file }, 'failed to read authentication config file')
      return
    }
    if (text === this.#tracked) return
    let r = loadJwtConfiguration(text, this.setup.disallowedIssuers)
    if (r.ok && JSON.stringify(r.anonymous) !== JSON.stringify(this.setup.anonymous)) {
      r = { ok: false, error: 'invalid authentication configuration: anonymous: Forbidden: changed from initial configuration file', load: false }
    }
    if (!r.ok) {
      this.log.error({ err: r.error, file }, r.load ? 'failed to load authentication config' : 'failed to validate authentication config')
      // Never valid: not tried again until the file changes.
      this.#tracked = text
      return
    }
    // The same text already waiting for its issuers: let it go on waiting.
    if (this.#pending !== undefined && this.#pendingText === text) return
    this.#pending?.close()
    const next = new JwtAuthenticators(r.jwt.map((c) => new JwtAuthenticator(c, this.setup.algs, this.log)))
    this.#pending = next
    this.#pendingText = text
    const started = Date.now()
    const swapWhenReady = (): void => {
      if (this.#pending !== next) return
      const notReady = next.list.filter((a) => !a.ready)
      if (notReady.length === 0) {
        const old = this.current
        this.current = next
        this.#pending = undefined
        this.#tracked = text
        this.onSwap(next)
        this.log.info({ file, issuers: next.list.map((a) => a.c.url) }, 'reloaded authentication config')
        // Requests under way may still use the old authenticators.
        setTimeout(() => old.close(), 60_000).unref()
        return
      }
      if (Date.now() - started >= 60_000) {
        this.log.error({ file, err: notReady.map((a) => `oidc: authenticator for issuer ${goQ(a.c.url)} is not healthy: ${a.health}`).join(', ') }, 'failed to update authentication config')
        next.close()
        this.#pending = undefined
        return
      }
      setTimeout(swapWhenReady, 100).unref()
    }
    swapWhenReady()
  }

  close(): void {
    this.#watcher?.close()
    if (this.#poll) clearInterval(this.#poll)
    if (this.#debounce) clearTimeout(this.#debounce)
    this.#pending?.close()
    this.current.close()
  }
}

/** The options prepareJwtSetup reads. */
export interface JwtOptions {
  authenticationConfig: string
  oidcIssuerUrl: string; oidcClientId: string; oidcCaFile: string; oidcUsernameClaim: string; oidcUsernamePrefix: string
  oidcGroupsClaim: string; oidcGroupsPrefix: string; oidcSigningAlgs: string[]; oidcRequiredClaim: string[]
  serviceAccountIssuer: string[]
  anonymousAuthSet: boolean
}

/**
 * At start (main thread): the file or the flags loaded and validated as upstream does; an error is the text upstream
 * exits with. Undefined when no JWT authenticator is configured (a request then pays nothing for this feature).
 */
export function prepareJwtSetup(o: JwtOptions): JwtSetup | undefined {
  const disallowedIssuers = [...o.serviceAccountIssuer]
  if (o.authenticationConfig !== '') {
    let text: string
    try { text = readFileSync(o.authenticationConfig, 'utf8') } catch (err) {
      const e = err as NodeJS.ErrnoException
      const why = e.code === 'ENOENT' ? 'no such file or directory' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'is a directory' : e.message
      throw new Error(`failed to load authentication configuration from file ${goQ(o.authenticationConfig)}: open ${o.authenticationConfig}: ${why}`)
    }
    const r = loadJwtConfiguration(text, disallowedIssuers)
    if (!r.ok) throw new Error(r.load ? `failed to load authentication configuration from file ${goQ(o.authenticationConfig)}: ${r.error}` : r.error)
    if (r.anonymous !== undefined && o.anonymousAuthSet) throw new Error('anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file')
    return { file: o.authenticationConfig, text, algs: [...ALLOWED_SIGNING_ALGS], disallowedIssuers, anonymous: r.anonymous }
  }
  if (o.oidcIssuerUrl === '' || o.oidcClientId === '') return undefined
  let caPem = ''
  if (o.oidcCaFile !== '') {
    try { caPem = readFileSync(o.oidcCaFile, 'utf8') } catch (err) {
      const e = err as NodeJS.ErrnoException
      throw new Error(`open ${o.oidcCaFile}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`)
    }
  }
  const config = configFromFlags({
    issuerUrl: o.oidcIssuerUrl, clientId: o.oidcClientId, usernameClaim: o.oidcUsernameClaim, usernamePrefix: o.oidcUsernamePrefix,
    groupsClaim: o.oidcGroupsClaim, groupsPrefix: o.oidcGroupsPrefix, requiredClaims: o.oidcRequiredClaim, caPem,
  })
  const v = validateAuthenticationConfiguration(config, disallowedIssuers)
  if (v.errors.length > 0) throw new Error(`invalid authentication configuration: ${aggregateText(v.errors)}`)
  return { file: '', text: JSON.stringify(config), algs: [...o.oidcSigningAlgs], disallowedIssuers }
}
