/**
 * Checking untrusted JSON against a shape, in full: small composable checks whose types are
 * inferred, so a message's check and its TypeScript type cannot drift apart (a check that
 * accepts something else than the type says does not compile where it is used).
 *
 * Objects are exact: a key the shape does not name is an error, and a key the shape marks
 * optional may be missing or `undefined` (what `postMessage` keeps of an unset field).
 */

/** A check: the value as `T`, or a reason it is not one. */
export type Schema<T> = (value: unknown, path: string) => { ok: true; value: T } | { ok: false; error: string };

export type Infer<S> = S extends Schema<infer T> ? T : never;

const fail = (path: string, what: string) => ({ ok: false as const, error: `${path || 'the message'}: ${what}` });
const pass = <T>(value: T) => ({ ok: true as const, value });

export function string(options: { max?: number; nonEmpty?: boolean } = {}): Schema<string> {
  return (v, path) => {
    if (typeof v !== 'string') return fail(path, 'expected a string');
    if (options.nonEmpty && v.length === 0) return fail(path, 'expected a non-empty string');
    if (options.max !== undefined && v.length > options.max) return fail(path, `longer than ${options.max} characters`);
    return pass(v);
  };
}

/** A whole number, at least `min`. */
export function integer(min = 0): Schema<number> {
  return (v, path) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? pass(v) : fail(path, `expected a whole number ≥ ${min}`));
}

export function boolean(): Schema<boolean> {
  return (v, path) => (typeof v === 'boolean' ? pass(v) : fail(path, 'expected true or false'));
}

export function oneOf<const T extends readonly string[]>(values: T): Schema<T[number]> {
  return (v, path) => (typeof v === 'string' && values.includes(v) ? pass(v as T[number]) : fail(path, `expected one of ${values.join(', ')}`));
}

export function literal<const T extends string>(value: T): Schema<T> {
  return (v, path) => (v === value ? pass(value) : fail(path, `expected "${value}"`));
}

export function array<T>(item: Schema<T>, max = 1000): Schema<T[]> {
  return (v, path) => {
    if (!Array.isArray(v)) return fail(path, 'expected a list');
    if (v.length > max) return fail(path, `more than ${max} entries`);
    const out: T[] = [];
    for (let i = 0; i < v.length; i++) {
      const r = item(v[i], `${path}[${i}]`);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return pass(out);
  };
}

/** Marks an object member as optional. */
export interface Optional<T> {
  optional: Schema<T>;
}
export function optional<T>(schema: Schema<T>): Optional<T> {
  return { optional: schema };
}

type Shape = Record<string, Schema<unknown> | Optional<unknown>>;
type Required<S extends Shape> = { [K in keyof S as S[K] extends Optional<unknown> ? never : K]: S[K] extends Schema<infer T> ? T : never };
type Optionals<S extends Shape> = { [K in keyof S as S[K] extends Optional<unknown> ? K : never]?: S[K] extends Optional<infer T> ? T : never };
type Flat<T> = { [K in keyof T]: T[K] };
export type ObjectOf<S extends Shape> = Flat<Required<S> & Optionals<S>>;

export function object<S extends Shape>(shape: S): Schema<ObjectOf<S>> {
  return (v, path) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail(path, 'expected an object');
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!Object.prototype.hasOwnProperty.call(shape, key)) return fail(path, `unexpected field "${key}"`);
    }
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(shape)) {
      const present = Object.prototype.hasOwnProperty.call(record, key) && record[key] !== undefined;
      const check = typeof member === 'function' ? member : member.optional;
      if (!present) {
        if (typeof member === 'function') return fail(`${path}.${key}`, 'missing');
        continue;
      }
      const r = check(record[key], path ? `${path}.${key}` : key);
      if (!r.ok) return r;
      out[key] = r.value;
    }
    return pass(out as ObjectOf<S>);
  };
}

/** The first of `schemas` that accepts the value (for unions without a tag). */
export function either<A, B>(a: Schema<A>, b: Schema<B>): Schema<A | B> {
  return (v, path) => {
    const first = a(v, path);
    if (first.ok) return first;
    const second = b(v, path);
    return second.ok ? second : first;
  };
}
