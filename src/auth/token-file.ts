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
  return out.map((s) => s.trim())
}

export function parseTokenFile(text: string, file = 'token file'): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>()
  const lines = text.split(/\r?\n/)
  lines.forEach((line, i) => {
    if (line.trim() === '' || line.trim().startsWith('#')) return
    const cols = splitCsvLine(line)
    if (cols.length < 3 || cols[0] === '' || cols[1] === '') throw new Error(`${file}: line ${i + 1}: need at least token,user,uid`)
    const groups = cols[3] ? cols[3].split(',').map((g) => g.trim()).filter(Boolean) : []
    users.set(cols[0], { username: cols[1], uid: cols[2], groups })
  })
  return users
}

export function readTokenFile(path: string): Map<string, UserInfo> {
  return parseTokenFile(readFileSync(path, 'utf8'), path)
}
