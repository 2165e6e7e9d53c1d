// Label selector parsing as upstream's lexer and parser read it: the requirements, and the error texts naming whole tokens.
import t from 'tap'
import { parseLabelSelector, SelectorError } from '../../src/machinery/selectors.js'

t.test('valid selectors', async (t) => {
  t.same(parseLabelSelector(' env = prod , tier == fe '), [{ key: 'env', op: 'eq', value: 'prod' }, { key: 'tier', op: 'eq', value: 'fe' }])
  t.same(parseLabelSelector('a notin (y,x),!b,c'), [{ key: 'a', op: 'notin', values: ['x', 'y'] }, { key: 'b', op: 'notexists' }, { key: 'c', op: 'exists' }])
  t.same(parseLabelSelector('n>5'), [{ key: 'n', op: 'gt', value: 5 }])
  t.same(parseLabelSelector('in=1,notin!=2'), [{ key: 'in', op: 'eq', value: '1' }, { key: 'notin', op: 'neq', value: '2' }], 'keywords are identifiers where a key or value stands')
  t.same(parseLabelSelector('env in ()'), [{ key: 'env', op: 'in', values: [''] }], 'an empty set holds the empty value')
  t.same(parseLabelSelector('env in (,a)'), [{ key: 'env', op: 'in', values: ['', 'a'] }])
  t.same(parseLabelSelector('a='), [{ key: 'a', op: 'eq', value: '' }])
  t.same(parseLabelSelector(''), [])
})

t.test('errors name the token upstream names', async (t) => {
  const cases: Array<[string, string]> = [
    ['env IN (a)', "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"],
    ['x (', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ['type=app,versionv1.0.1)', "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt"],
    ['e!!!!!ss', "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['a==b==c', "found '==', expected: ',' or 'end of string'"],
    ['env=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x,,y', "found ',', expected: identifier after ','"],
    ['a,', "found '', expected: identifier after ','"],
    ['=prod', "found '=', expected: !, identifier, or 'end of string'"],
    ['n>x', 'unable to parse requirement: values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value must be an integer'],
  ]
  for (const [sel, text] of cases) {
    let err: unknown
    try { parseLabelSelector(sel) } catch (e) { err = e }
    t.ok(err instanceof SelectorError, `${JSON.stringify(sel)} is refused`)
    t.equal((err as Error | undefined)?.message, text, JSON.stringify(sel))
  }
})
