// A bare uWS server answering every request with one fixed body: the HTTP ceiling of the machine (--peer uws-hello).
// Run as its own process: node uws-hello-server.js <port> <body file>. Prints "listening" when ready.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'

// Loaded directly: the package would otherwise fall back to a slow JavaScript server without a word.
const require = createRequire(import.meta.url)
const uws: typeof import('uWebSockets.js') = require(`uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`)

const port = Number(process.argv[2])
const body = readFileSync(process.argv[3])

uws.App()
  .any('/*', (res) => {
    res.cork(() => {
      res.writeHeader('content-type', 'application/json').end(body)
    })
  })
  .listen('127.0.0.1', port, (sock) => {
    if (!sock) {
      process.stderr.write(`uws-hello: cannot listen on 127.0.0.1:${port}\n`)
      process.exit(1)
    }
    process.stdout.write('listening\n')
  })
