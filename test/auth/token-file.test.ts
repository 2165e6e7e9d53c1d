import t from 'tap'
import { parseTokenFile, splitCsvLine } from '../../src/auth/token-file.js'
import { bearerToken, withAuthenticated } from '../../src/pipeline/authenticate.js'

t.test('CSV lines: RFC 4180 quoting, doubled quotes, commas inside quotes, no trimming', async (t) => {
  t.same(splitCsvLine('a,b,c'), ['a', 'b', 'c'])
  t.same(splitCsvLine('"a,b",c,"x ""y"" z"'), ['a,b', 'c', 'x "y" z'])
  t.same(splitCsvLine('a, b ,c'), ['a', ' b ', 'c'])
  t.same(splitCsvLine('a,,c,'), ['a', '', 'c', ''])
})

t.test('token files: three columns at least, groups split on commas, empty tokens skipped, later duplicates win', async (t) => {
  const warnings: string[] = []
  const m = parseTokenFile([
    't1,alice,u1,"dev,ops"',
    't2,bob,u2',
    '# a comment',
    '',
    ',ghost,u3',
    't2,bobby,u2b,,extra',
    't3,carol,u3,solo,ignored,"also, ignored"',
  ].join('\r\n'), 'tokens.csv', (w) => warnings.push(w))
  t.same([...m.keys()], ['t1', 't2', 't3'])
  t.same(m.get('t1'), { username: 'alice', uid: 'u1', groups: ['dev', 'ops'] })
  t.same(m.get('t2'), { username: 'bobby', uid: 'u2b', groups: [] }, 'the later duplicate wins')
  t.same(m.get('t3'), { username: 'carol', uid: 'u3', groups: ['solo'] })
  t.equal(warnings.length, 2, 'the empty token and the duplicate are reported')
  t.throws(() => parseTokenFile('t1,alice\n', 'f.csv'), /f\.csv: line 1: must have at least 3 columns \(token, user name, user uid\), found 2/)
})

t.test('bearer tokens as upstream reads them', async (t) => {
  t.equal(bearerToken(undefined), '')
  t.equal(bearerToken(''), '')
  t.equal(bearerToken('Bearer abc'), 'abc')
  t.equal(bearerToken('bearer abc'), 'abc', 'the scheme is case-insensitive')
  t.equal(bearerToken('  Bearer abc  '), 'abc', 'the header is trimmed')
  t.equal(bearerToken('Bearer abc def'), 'abc', 'the second space-separated part')
  t.equal(bearerToken('Bearer  abc'), '', 'two spaces: the token part is empty')
  t.equal(bearerToken('Basic abc'), '', 'another scheme')
  t.equal(bearerToken('Bearer'), '')
})

t.test('system:authenticated is added once, never to anonymous users', async (t) => {
  t.same(withAuthenticated({ username: 'a', uid: '', groups: ['g'] }).groups, ['g', 'system:authenticated'])
  t.same(withAuthenticated({ username: 'a', uid: '', groups: ['system:authenticated', 'g'] }).groups, ['system:authenticated', 'g'])
  t.same(withAuthenticated({ username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }).groups, ['system:unauthenticated'])
  t.same(withAuthenticated({ username: 'x', uid: '', groups: ['system:unauthenticated'] }).groups, ['system:unauthenticated'])
})
