// Start-up creation of the built-in PriorityClasses (upstream post-start hook scheduling/bootstrap-system-priority-classes) through the in-process client.
import type { Logger } from 'pino'
import type { InternalClient } from '../server/internal-client.js'
import { SYSTEM_PRIORITY_CLASSES, systemPriorityClassObject } from '../registry/resources/scheduling.orch.io/priorityclasses.js'

const COLLECTION = '/apis/scheduling.orch.io/v1/priorityclasses'

/**
 * Each system class that is missing is created; one that exists is left as it is (its value and globalDefault cannot
 * differ: validation refuses a system name with other ones). Runs on every start, so a deleted class is back after the
 * next start. Anything but "created" or "already there" fails the start.
 */
export async function ensureSystemPriorityClasses(client: InternalClient, log: Logger): Promise<number> {
  let created = 0
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    const cur = await client.request('GET', `${COLLECTION}/${c.name}`)
    if (cur.status === 200) continue
    if (cur.status !== 404) throw new Error(`reading PriorityClass ${c.name}: ${cur.status} ${cur.body.message}`)
    const r = await client.request('POST', COLLECTION, systemPriorityClassObject(c))
    if (r.status === 409) continue
    if (r.status !== 201) throw new Error(`creating PriorityClass ${c.name}: ${r.status} ${r.body.message}`)
    created++
    log.info({ name: c.name, value: c.value }, 'created system PriorityClass')
  }
  return created
}
