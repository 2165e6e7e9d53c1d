// The built-in controllers of the main thread: started after bootstrap, stopped at shutdown.
import type { Logger } from 'pino'
import type { InternalClient } from '../server/internal-client.js'
import { NamespaceController } from './namespace.js'
import { GarbageCollector } from './garbage-collector.js'

export interface Controllers { stop(): void }

export function startControllers(client: InternalClient, log: Logger): Controllers {
  const ns = new NamespaceController(client, log.child({ controller: 'namespace' }))
  const gc = new GarbageCollector(client, log.child({ controller: 'garbage-collector' }))
  void ns.start()
  void gc.start()
  return { stop() { ns.stop(); gc.stop() } }
}
