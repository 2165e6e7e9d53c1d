// Test helper: runs the stock kubectl (v1.32, on the PATH) against a test server's admin kubeconfig, with its own HOME
// (kubectl's discovery cache) and no KUBECONFIG from the environment.
import { execFile } from 'node:child_process'

export interface KubectlRun { code: number; stdout: string; stderr: string }

export interface KubectlOptions {
  /** written to kubectl's standard input */
  stdin?: string
  timeoutMs?: number
}

/** One kubectl run; `code` is its exit code (-1 when it was killed or did not start). */
export function runKubectl(kubeconfig: string, home: string, args: string[], opts: KubectlOptions = {}): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      env: { ...process.env, HOME: home, KUBECONFIG: '' }, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 << 20,
    }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0
      resolve({ code, stdout: String(stdout), stderr: String(stderr) })
    })
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin)
  })
}
