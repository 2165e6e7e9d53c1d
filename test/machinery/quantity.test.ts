import t from 'tap'
import {
  canonicalQuantity, compareQuantities, isInteger, isNegative, parseQuantity, quantityParseError, scaledValue,
  ERR_QUANTITY_FORMAT, ERR_QUANTITY_SUFFIX,
} from '../../src/machinery/quantity.js'

/** The exact value as a decimal string `mantissa e exponent` after stripping trailing zeros, for comparisons. */
function value(s: string): string {
  const q = parseQuantity(s)
  if (q === undefined) return 'invalid'
  let m = q.mantissa
  let e = q.exponent
  if (m === 0n) return '0'
  while (m % 10n === 0n) { m /= 10n; e++ }
  return `${m}e${e}`
}

/** An integer in the `mantissa e exponent` form of value(). */
function norm(n: bigint): string {
  let e = 0
  while (n !== 0n && n % 10n === 0n) { n /= 10n; e++ }
  return `${n}e${e}`
}

t.test('values of upstream TestQuantityParse', async (t) => {
  const cases: Array<[string, string, string]> = [
    // input, value (mantissa e exponent), format
    ['0', '0', 'DecimalSI'], ['0n', '0', 'DecimalSI'], ['0Ki', '0', 'BinarySI'], ['0M', '0', 'DecimalSI'], ['0Ti', '0', 'BinarySI'],
    ['1', '1e0', 'DecimalSI'],
    ['1Ki', '1024e0', 'BinarySI'], ['8Ki', '8192e0', 'BinarySI'], ['7Mi', `${7 * 1024 * 1024}e0`, 'BinarySI'],
    ['3Ei', `${3n * 2n ** 60n}e0`, 'BinarySI'], ['100Ti', norm(100n * 2n ** 40n), 'BinarySI'],
    ['5n', '5e-9', 'DecimalSI'], ['4u', '4e-6', 'DecimalSI'], ['3m', '3e-3', 'DecimalSI'], ['50k', '5e4', 'DecimalSI'],
    ['40T', '4e13', 'DecimalSI'], ['300T', '3e14', 'DecimalSI'], ['1E', '1e18', 'DecimalSI'],
    ['1E-3', '1e-3', 'DecimalExponent'], ['1e3', '1e3', 'DecimalExponent'], ['1E18', '1e18', 'DecimalExponent'], ['1e14', '1e14', 'DecimalExponent'],
    ['100.035k', '100035e0', 'DecimalSI'],
    ['0.001', '1e-3', 'DecimalSI'], ['0.0005k', '5e-1', 'DecimalSI'], ['0.00050k', '5e-1', 'DecimalSI'], ['0.50000', '5e-1', 'DecimalSI'],
    ['0.5e-2', '5e-3', 'DecimalExponent'], ['10.035M', '10035e3', 'DecimalSI'],
    ['1.2e3', '12e2', 'DecimalExponent'], ['1.3E+6', '13e5', 'DecimalExponent'], ['1.40e9', '14e8', 'DecimalExponent'], ['1.7E18', '17e17', 'DecimalExponent'],
    ['9.01', '901e-2', 'DecimalSI'], ['6.987654321G', '6987654321e0', 'DecimalSI'], ['1.01E', '101e16', 'DecimalSI'],
    // rounding up to a nano, capping binary values at 2^63-1
    ['3.001n', '4e-9', 'DecimalSI'], ['1.1E-9', '2e-9', 'DecimalExponent'], ['0.0000000001', '1e-9', 'DecimalSI'], ['0.5e-9', '1e-9', 'DecimalExponent'],
    ['0.9n', '1e-9', 'DecimalSI'], ['0.00000012345', '124e-9', 'DecimalSI'], ['0.00000012354', '124e-9', 'DecimalSI'],
    ['9Ei', '9223372036854775807e0', 'BinarySI'], ['9223372036854775807Ki', '9223372036854775807e0', 'BinarySI'], ['12E', '12e18', 'DecimalSI'],
    ['100.035Ki', '10243584e-2', 'BinarySI'], ['0.5Mi', '524288e0', 'BinarySI'], ['0.05Gi', '536870912e-1', 'BinarySI'], ['0.025Ti', '274877906944e-1', 'BinarySI'],
    // "written by trolls"
    ['0.000000000001Ki', '2e-9', 'DecimalSI'], ['.001', '1e-3', 'DecimalSI'], ['.0001k', '1e-1', 'DecimalSI'], ['1.', '1e0', 'DecimalSI'], ['1.G', '1e9', 'DecimalSI'],
  ]
  for (const [input, want, format] of cases) {
    t.equal(value(input), want, `${input} value`)
    t.equal(parseQuantity(input)?.format, format, `${input} format`)
    const neg = parseQuantity('-' + input)
    t.equal(neg === undefined ? 'invalid' : value('-' + input), want === '0' ? '0' : `-${want}`, `-${input} value`)
    t.equal(value('+' + input), want, `+${input} value`)
  }
})

t.test('texts upstream refuses (TestQuantityParse invalid list)', async (t) => {
  for (const s of ['1.1.M', '1+1.0M', '0.1mi', '0.1am', 'aoeu', '.5i', '1i', '-3.01i', '-3.01e-', ' 1', '1 ', '', '1e', '1k3', '1Kim']) {
    t.equal(parseQuantity(s), undefined, `${JSON.stringify(s)} is refused`)
    t.ok(quantityParseError(s), `${JSON.stringify(s)} has an error text`)
  }
  t.equal(quantityParseError('1.1.M'), ERR_QUANTITY_FORMAT)
  t.equal(quantityParseError('0.1mi'), ERR_QUANTITY_SUFFIX)
  t.equal(quantityParseError('1Ki'), undefined)
  t.equal(canonicalQuantity('aoeu'), undefined)
})

t.test('canonical form of upstream TestQuantityString (alternate spellings → canonical)', async (t) => {
  const cases: Array<[string, string]> = [
    ['1024Mi', '1Gi'], ['307200Ki', '300Mi'], ['6Ki', '6Ki'], ['1025024Mi', '1001Gi'], ['1024Gi', '1Ti'],
    ['1000M', '1G'], ['0.001T', '1G'], ['1000000k', '1G'], ['1000000000', '1G'], ['1000u', '1m'], ['80m', '80m'],
    ['1.08', '1080m'], ['1080000000n', '1080m'], ['300M', '300M'], ['1T', '1T'], ['1234567M', '1234567M'], ['3k', '3k'],
    ['1025', '1025'], ['0', '0'], ['00', '0'], ['.001e12', '1e9'], ['0.001e0', '1e-3'], ['1000e-12', '1e-9'], ['80e-3', '80e-3'],
    ['300e6', '300e6'], ['1e12', '1e12'], ['3e3', '3e3'], ['1n', '1n'], ['80n', '80n'], ['1080n', '1080n'], ['1080u', '1080u'],
    ['5000m', '5'], ['0.5', '500m'],
  ]
  for (const [input, want] of cases) {
    t.equal(canonicalQuantity(input), want, `${input} → ${want}`)
    if (want !== '0') t.equal(canonicalQuantity('-' + input), '-' + want, `-${input} → -${want}`)
  }
})

t.test('canonical form of upstream TestQuantityParseEmit and TestParseQuantity', async (t) => {
  const cases: Array<[string, string]> = [
    ['1Ki', '1Ki'], ['1Mi', '1Mi'], ['1Gi', '1Gi'], ['1024Mi', '1Gi'], ['1000M', '1G'],
    ['.001Ki', '1024m'], ['.000001Ki', '1024u'], ['.000000001Ki', '1024n'], ['.000000000001Ki', '2n'],
    ['999999999999999999.0', '999999999999999999'], ['999999999999999999.1', '999999999999999999100m'],
    ['1000000000000000000', '1E'], ['1.0E', '1E'], ['9999999999999999999000m', '9999999999999999999'],
    ['1.0000000000000000001E', '1000000000000000000100m'], ['1.000000000000000001E', '1000000000000000001'],
    ['10000000000000000000', '10E'], ['10.0E', '10E'], ['10000000000000000000000m', '10E'],
    ['10.0000000000000000001E', '10000000000000000000100m'], ['9223372036854775806000m', '9223372036854775806'],
  ]
  for (const [input, want] of cases) {
    t.equal(canonicalQuantity(input), want, `${input} → ${want}`)
    t.equal(canonicalQuantity('-' + input), '-' + want, `-${input} → -${want}`)
  }
})

t.test('canonical form: the cases a serialiser most often meets', async (t) => {
  const cases: Array<[string | number, string]> = [
    ['1000m', '1'], ['1500m', '1500m'], ['1.5', '1500m'], ['0.1', '100m'], [0.5, '500m'], [0.1, '100m'], [2, '2'], [1024, '1024'],
    ['1.5Gi', '1536Mi'], ['1.5Ki', '1536'], ['1536Ki', '1536Ki'], ['2048Ki', '2Mi'], ['1023Ki', '1023Ki'], ['0.5Ki', '512'],
    ['1e-9', '1e-9'], ['1e-12', '1e-9'], ['0.0000000001', '1n'], ['1e-10', '1e-9'], ['100Mi', '100Mi'], ['128974848', '128974848'],
    ['129e6', '129e6'], ['129M', '129M'], ['123Mi', '123Mi'], ['12e6', '12e6'], ['2e3', '2e3'], ['20e3', '20e3'],
    ['1000e3', '1e6'], ['5e-1', '500e-3'], ['0Gi', '0'], ['-0', '0'], ['9Ei', '9223372036854775807'], ['-9Ei', '-9223372036854775807'],
    ['100.035Ki', '102435840m'], ['1000E', '1'], ['0.1m', '100u'], ['1e0', '1e0'], ['10e-1', '1'],
    [' 1', '1'], ['1 ', '1'],
  ]
  for (const [input, want] of cases) t.equal(canonicalQuantity(input), want, `${JSON.stringify(input)} → ${want}`)
})

t.test('texts upstream already considers canonical are kept as written', async (t) => {
  // Its parser keeps the input string when its digits carry no leading zero and no trailing "000" and the scale is a
  // multiple of 3 (decimal), or the number is not a multiple of 8 (binary).
  for (const s of ['010', '+1', '1.500', '12.345', '1E3', '1e+3', '01Ki', '+1Ki', '1025Ki', '1001E']) t.equal(canonicalQuantity(s), s, `${s} kept`)
  // Not kept: these are recomputed.
  t.equal(canonicalQuantity('1.5k'), '1500')
  t.equal(canonicalQuantity('+1.5'), '1500m')
  t.equal(canonicalQuantity('0010.0'), '10')
  t.equal(canonicalQuantity('8Ki'), '8Ki')
})

t.test('compareQuantities is exact across notations', async (t) => {
  t.equal(compareQuantities('1Gi', '1024Mi'), 0)
  t.equal(compareQuantities('1', '1000m'), 0)
  t.equal(compareQuantities('1k', '1Ki'), -1)
  t.equal(compareQuantities('1Ki', '1k'), 1)
  t.equal(compareQuantities('100m', '0.1'), 0)
  t.equal(compareQuantities('-1', '0'), -1)
  t.equal(compareQuantities('-2', '-1'), -1)
  t.equal(compareQuantities('0', '-0'), 0)
  t.equal(compareQuantities('1e300', '1e299'), 1)
  t.equal(compareQuantities('1e-300', '0'), 1, 'rounded up to 1n')
  t.equal(compareQuantities('9007199254740993', '9007199254740992'), 1, 'beyond float precision')
  t.equal(compareQuantities('1.000000001', '1'), 1)
  t.equal(compareQuantities('1E', '1000P'), 0)
})

t.test('helpers used by validation', async (t) => {
  t.ok(isNegative('-1'))
  t.ok(isNegative('-1n'))
  t.notOk(isNegative('-0'))
  t.notOk(isNegative('1'))
  t.ok(isInteger('10'))
  t.ok(isInteger('1k'))
  t.ok(isInteger('1Ki'))
  t.ok(isInteger('1000m'))
  t.notOk(isInteger('1500m'))
  t.notOk(isInteger('1.5'))
  t.notOk(isInteger('1n'))
  t.ok(isInteger('0'))
  t.equal(scaledValue('1500m', 0), 2n, 'Value rounds up')
  t.equal(scaledValue('-1500m', 0), -2n, 'away from zero')
  t.equal(scaledValue('1.5', -3), 1500n, 'MilliValue')
  t.equal(scaledValue('1n', -3), 1n)
  t.equal(scaledValue('2Ki', 0), 2048n)
})
