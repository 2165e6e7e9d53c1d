// Test helper: node processes started by a test run without tap's instrumentation.

/**
 * The command and arguments that run `node <args>` as a plain process. tap runs each test file with
 * `--import=<@tapjs/processinfo>`, which hooks child_process so that every process the test starts gets it too, in
 * NODE_OPTIONS (it follows child processes for coverage, which this suite turns off). A server under it, each of
 * its threads loading it, spends about twice the CPU on its start; so under tap the child is started through
 * `env -u NODE_OPTIONS`, which execs node (same pid) without it.
 */
export function plainNode(args: string[]): [string, string[]] {
  return process.env.TAP === '1' ? ['env', ['-u', 'NODE_OPTIONS', process.execPath, ...args]] : [process.execPath, args]
}
