// The static token file (--token-auth-file): CSV lines token,user,uid,"group1,group2".
import { readFileSync } from 'node:fs'
import type { UserInfo } from '../pipeline/context.js'

/** Splits one CSV line with double-quote quoting ("" inside quotes is a quote). */
export function splitCsvLine(line: string): string[] {
  const out: string[] = []
  let cur = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++ }
      else if (c === '"') quoted = false
      else cur += c
    } else if (c === '"') quoted = true
    else if (c === ',') { out.push(cur); cur = '' }
    else cur += c
  }
  out.push(cur)
  return out
}

/**
 * upstream tokenfile: records of at least three columns (token, user, uid); a fourth is split on `,` (no trimming) into
 * groups, further columns are ignored. Rows with an empty token are skipped; a later duplicate token wins.
 * Blank lines and lines starting with `#` are skipped too.
 */
export function parseTokenFile(text: string, file = 'token file', warn: (msg: string) => void = () => {}): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>()
  const lines = text.split(/\r?\n/)
  lines.forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return
    const cols = splitCsvLine(line)
    if (cols.length < 3) throw new Error(`${file}: line ${i + 1}: must have at least 3 columns (token, user name, user uid), found ${cols.length}`)
    if (cols[0] === '') { warn(`${file}: line ${i + 1}: empty token skipped`); return }
    if (users.has(cols[0])) warn(`${file}: line ${i + 1}: duplicate token, the later one wins`)
    const groups = cols.length >= 4 ? cols[3].split(',').filter((g) => g !== '') : []
    users.set(cols[0], { username: cols[1], uid: cols[2], groups })
  })
  return users
}

export function readTokenFile(path: string, warn?: (msg: string) => void): Map<string, UserInfo> {
  return parseTokenFile(readFileSync(path, 'utf8'), path, warn)
}
