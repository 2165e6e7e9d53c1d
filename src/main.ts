// Entry point: flags → Options → start(); logs one line telling how to use the server.
import { pino } from 'pino'
import { resolveOptions, OptionsError, usage } from './options.js'
import { start } from './server/start.js'
import { lmdbAddon } from './machinery/lmdb-addon.js'

async function main(): Promise<void> {
  const argv = process.argv.slice(2)
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage())
    return
  }
  let options
  try {
    options = resolveOptions(argv)
  } catch (err) {
    if (err instanceof OptionsError) {
      process.stderr.write(`orch-apiserver: ${err.message}\n`)
      process.exit(2)
    }
    throw err
  }
  const log = pino({ level: options.logLevel, redact: ['authorization', 'token'] })
  for (const w of options.featureGateWarnings) log.warn(w)
  try {
    const server = await start(options, log)
    const urls = [server.httpsPort ? `https://${options.bindAddress}:${server.httpsPort}` : '', server.httpPort ? `http://${options.bindAddress}:${server.httpPort}` : ''].filter(Boolean)
    log.info({ urls, httpsPort: server.httpsPort, httpPort: server.httpPort, kubeconfig: server.kubeconfig || undefined, lmdbAddon: lmdbAddon() },
      server.kubeconfig ? `orch-apiserver ready on ${urls.join(' and ')}; use it with: kubectl --kubeconfig ${server.kubeconfig} get namespaces` : `orch-apiserver ready on ${urls.join(' and ')}`)
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      log.info({ signal }, 'shutting down')
      server.close().then(() => { log.info('stopped'); process.exit(0) }, (err) => { log.error({ err }, 'shutdown failed'); process.exit(1) })
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
  } catch (err) {
    if (err instanceof OptionsError) {
      log.fatal(err.message)
      process.stderr.write(`orch-apiserver: ${err.message}\n`)
      process.exit(2)
    }
    log.fatal({ err }, 'start failed')
    process.exit(1)
  }
}

void main()
