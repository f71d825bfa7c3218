'use strict';
// The value encoding of docs/oracle.md, written for the oracle's differential test (tests/test_oracle_differential.py):
// it plays the in-realm recorder's part, turning real values into the tagged JSON the out-of-realm decider reads.

const ASYMMETRIC_KINDS = {
  Any: ['any', false],
  Anything: ['anything', false],
  ArrayContaining: ['arrayContaining', false],
  ArrayNotContaining: ['arrayContaining', true],
  ObjectContaining: ['objectContaining', false],
  ObjectNotContaining: ['objectContaining', true],
  StringContaining: ['stringContaining', false],
  StringNotContaining: ['stringContaining', true],
  StringMatching: ['stringMatching', false],
  StringNotMatching: ['stringMatching', true],
  NumberCloseTo: ['closeTo', false],
  NumberNotCloseTo: ['closeTo', true],
};

function isIndex(key) {
  return /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1;
}

function ctorName(value) {
  const proto = Object.getPrototypeOf(value);
  if (proto === null) return '';
  const ctor = proto.constructor;
  return typeof ctor === 'function' ? ctor.name : '';
}

function chainOf(value) {
  const names = [];
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const ctor = Object.prototype.hasOwnProperty.call(proto, 'constructor') ? proto.constructor : undefined;
    names.push(typeof ctor === 'function' ? ctor.name : '');
  }
  return names;
}

function makeEncoder() {
  const ids = new Map();
  const ctorIds = new Map();
  const ctorId = (value) => {
    const proto = Object.getPrototypeOf(value);
    const ctor = proto === null ? null : proto.constructor;
    if (!ctorIds.has(ctor)) ctorIds.set(ctor, ctorIds.size);
    return ctorIds.get(ctor);
  };
  let next = 0;
  let nodes = 0;
  const register = (value) => {
    const id = next++;
    ids.set(value, id);
    return id;
  };
  const pairs = (value, keys, depth) => keys.map((k) => [k, enc(value[k], depth + 1)]);

  function enc(value, depth = 0) {
    if (depth > 40) return {t: 'cut', why: 'depth'};
    if (++nodes > 20000) return {t: 'cut', why: 'size'};
    if (value === undefined) return {t: 'undefined'};
    if (value === null) return {t: 'null'};
    switch (typeof value) {
      case 'boolean':
        return {t: 'bool', v: value};
      case 'number':
        return {t: 'number', v: Object.is(value, -0) ? '-0' : String(value)};
      case 'bigint':
        return {t: 'bigint', v: String(value)};
      case 'string':
        return {t: 'string', v: value};
      case 'symbol':
        return {t: 'symbol', d: value.description ?? ''};
    }
    if (ids.has(value)) return {t: 'ref', id: ids.get(value)};
    if (value && typeof value.asymmetricMatch === 'function') {
      const [kind, inverse] = ASYMMETRIC_KINDS[value.toString()] || [value.toString(), false];
      const node = {t: 'asymmetric', kind, inverse, sample: enc(value.sample, depth + 1)};
      if (kind === 'closeTo') node.precision = enc(value.precision, depth + 1);
      return node;
    }
    const id = register(value);
    if (typeof value === 'function') {
      const node = {t: 'function', name: value.name, id, mock: null};
      if (value._isMockFunction === true) {
        node.mock = {
          calls: value.mock.calls.map((args) => args.map((a) => enc(a, depth + 1))),
          results: value.mock.results.map((r) => ({type: r.type, value: enc(r.value, depth + 1)})),
        };
      }
      return node;
    }
    if (Array.isArray(value)) {
      const items = [];
      for (let i = 0; i < value.length; i++) items.push(i in value ? enc(value[i], depth + 1) : {t: 'hole'});
      return {t: 'array', id, items, props: pairs(value, Object.keys(value).filter((k) => !isIndex(k)), depth)};
    }
    if (value instanceof Map) {
      return {t: 'map', id, entries: [...value.entries()].map(([k, v]) => [enc(k, depth + 1), enc(v, depth + 1)])};
    }
    if (value instanceof Set) return {t: 'set', id, items: [...value.values()].map((v) => enc(v, depth + 1))};
    if (value instanceof Date) return {t: 'date', id, v: Number.isNaN(+value) ? 'NaN' : +value};
    if (value instanceof RegExp) return {t: 'regexp', id, source: value.source, flags: value.flags};
    if (value instanceof Error) {
      const node = {t: 'error', id, ctor: ctorName(value), name: String(value.name), message: String(value.message)};
      node.ctor_id = ctorId(value);
      node.entries = pairs(value, Object.keys(value), depth);
      node.chain = chainOf(value);
      node.cause = enc('cause' in value ? value.cause : undefined, depth + 1);
      return node;
    }
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      return {t: 'typedarray', id, ctor: ctorName(value), items: [...value].map((v) => enc(v, depth + 1))};
    }
    if (value instanceof Promise) return {t: 'promise', id, ctor: ctorName(value)};
    if (value instanceof WeakMap) return {t: 'weakmap', id, ctor: ctorName(value)};
    if (value instanceof WeakSet) return {t: 'weakset', id, ctor: ctorName(value)};
    const symbols = Object.getOwnPropertySymbols(value)
      .filter((s) => Object.getOwnPropertyDescriptor(value, s).enumerable)
      .map((s) => [s.description ?? '', enc(value[s], depth + 1)]);
    return {
      t: 'object',
      id,
      ctor: ctorName(value),
      ctor_id: ctorId(value),
      chain: chainOf(value),
      iterable: typeof value[Symbol.iterator] === 'function',
      entries: pairs(value, Object.keys(value), depth),
      symbols,
    };
  }
  return enc;
}

module.exports = {makeEncoder};
