// The bench CLI: `npm run bench -- <scenario> [options]`. Runs one scenario, prints its settings, the table and the
// ratios, then the report as one line of JSON; writes --json and --html files when asked.
import { killAll } from './lib/children.js'
import { Ctx, type Scenario } from './lib/context.js'
import { BenchOptionsError, COMMON, OPTIONS, help, resolve } from './lib/options.js'
import { setPayload } from './lib/objects.js'
import { Progress } from './lib/progress.js'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { machine, serverBuild, text, writeHtml, writeJson, type Report, type Setting } from './lib/report.js'
import { benchTmp, removeTmp } from './lib/server.js'
import { create } from './create.js'
import { get } from './get.js'
import { list } from './list.js'
import { update } from './update.js'
import { watchFanout } from './watch-fanout.js'
import { mixed } from './mixed.js'
import { startup } from './startup.js'
import { memory } from './memory.js'
import { apfFairness } from './apf-fairness.js'
import { encode } from './encode.js'

export const scenarios: Scenario[] = [create, get, list, update, watchFanout, mixed, startup, memory, apfFairness, encode]

function usage(): string {
  const lines = ['usage: npm run bench -- <scenario> [options]', '', 'scenarios:']
  for (const s of scenarios) lines.push(`  ${s.name.padEnd(13)} ${s.summary}`)
  lines.push('', 'options of every scenario:', help(COMMON))
  lines.push('', '`npm run bench -- <scenario> --help` lists the options of one scenario with its defaults.')
  lines.push('The etcd peer needs Debian\'s etcd-server: apt-get install etcd-server')
  return lines.join('\n') + '\n'
}

async function main(argv: string[]): Promise<number> {
  const name = argv[0]
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usage())
    return name ? 0 : 2
  }
  const scenario = scenarios.find((s) => s.name === name)
  if (!scenario) {
    process.stderr.write(`unknown scenario "${name}"\n\n${usage()}`)
    return 2
  }
  const names = [...scenario.options, ...COMMON]
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${scenario.name}: ${scenario.summary}\n\noptions:\n${help(names, scenario.defaults)}\n`)
    return 0
  }
  let resolved
  try {
    resolved = resolve(argv.slice(1), names, scenario.defaults, scenario.smokeDefaults)
  } catch (err) {
    if (err instanceof BenchOptionsError) {
      process.stderr.write(`bench ${scenario.name}: ${err.message}\n`)
      return 2
    }
    throw err
  }
  const { values, isDefault } = resolved
  try {
    setPayload(String(values.payload))
  } catch (err) {
    process.stderr.write(`bench ${scenario.name}: ${(err as Error).message}\n`)
    return 2
  }
  if (values.url && scenario.needsOwnServer) {
    process.stderr.write(`bench ${scenario.name}: restarts the server, so it cannot run against --url\n`)
    return 2
  }
  if (values.client === 'wrk' && !scenario.wrk) {
    process.stderr.write(`bench ${scenario.name}: --client wrk is for the get and apf-fairness scenarios only\n`)
    return 2
  }
  const execArgv = loadgenExecArgv(values['loadgen-gc'] as string)
  if (execArgv !== null) return relaunch(execArgv, argv)
  const tmp = benchTmp()
  const progress = new Progress(values.progress as boolean)
  const ctx = new Ctx(values, tmp, progress)
  const settings: Record<string, Setting> = {}
  for (const n of names) settings[n] = { value: values[n], isDefault: isDefault[n], help: OPTIONS[n].help }
  const started = new Date()
  const m = machine()
  const build = serverBuild(fileURLToPath(new URL('../', import.meta.url)))
  progress.note(`bench ${scenario.name}: ${names.filter((n) => !['json', 'html', 'keep', 'progress'].includes(n)).map((n) => `--${n} ${JSON.stringify(values[n])}`).join(' ')}`)
  try {
    const res = await scenario.run(ctx)
    const report: Report = {
      scenario: scenario.name, date: started.toISOString(), machine: m, serverBuild: build, settings,
      rows: res.rows, ratios: res.ratios, notes: ctx.notes,
    }
    process.stdout.write(text(report))
    process.stdout.write(JSON.stringify(report) + '\n')
    if (values.json) writeJson(values.json as string, report)
    if (values.html) writeHtml(values.html as string, report)
    return 0
  } finally {
    killAll()
    if (!values.keep) removeTmp(tmp)
    else progress.note(`kept ${tmp}`)
  }
}

/**
 * The node flags this process must run with for --loadgen-gc, or null when it already does. With V8's default, each
 * collection of the load generator's heap runs on up to four helper threads at once; on a machine it shares with the
 * server they take every core for tens of milliseconds, and the server's threads wait that long for one: a shard's
 * commit waited 20-35 ms in the run queue (its /proc/thread-self/schedstat) in the kubelet-shape watch fan-out,
 * under 10 ms with the load generator on --single-threaded-gc.
 */
function loadgenExecArgv(gc: string): string[] | null {
  const flag = '--single-threaded-gc'
  const has = process.execArgv.includes(flag)
  if ((gc === 'single') === has) return null
  const rest = process.execArgv.filter((a) => a !== flag)
  return gc === 'single' ? [flag, ...rest] : rest
}

/** Runs this CLI again in a child process with other node flags; resolves with its exit code. */
function relaunch(execArgv: string[], argv: string[]): Promise<number> {
  relaunched = spawn(process.execPath, [...execArgv, fileURLToPath(import.meta.url), ...argv], { stdio: 'inherit' })
  return new Promise((resolve) => {
    relaunched?.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
    relaunched?.once('error', (err) => { process.stderr.write(`bench: relaunching node failed: ${err.message}\n`); resolve(1) })
  })
}

/** The child that runs the bench when this process relaunched it: signals go to it, and it stops its own servers. */
let relaunched: ReturnType<typeof spawn> | null = null

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (relaunched !== null && relaunched.exitCode === null) { relaunched.kill(sig); return }
    killAll()
    process.exit(130)
  })
}
process.once('exit', killAll)

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code },
  (err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`)
    killAll()
    process.exitCode = 1
  },
)
