// Reading a pod (spec) as Go holds it: shapes that are not what the field should be read as absent.
import type { Obj } from '../../define.js'

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
export const str = (v: unknown): string => (typeof v === 'string' ? v : '')
export const set = (v: unknown): boolean => v !== undefined && v !== null
/** An int field as Go holds it: absent or null is 0. */
export const int = (v: unknown): number => (typeof v === 'number' ? v : 0)
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
/** The objects of a list field (anything else in it skipped). */
export const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : [])
export const objAt = (a: unknown[], i: number): Obj => (isObj(a[i]) ? a[i] as Obj : {})
