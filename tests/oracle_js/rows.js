'use strict';
// The differential table: each row is one assertion evaluated by real `expect` (run.js) and by the decider.
// `make()` returns [received, [matcher arguments]]; `not` adds .not; `p` is 'resolves' / 'rejects' (the received
// value is then what the promise settles with); `u` marks a
// row the decider may call undecidable (the record cannot settle it), every other row it must decide the same way;
// `since` is the first jest major that has what the row uses.
const expectModule = require(process.env.EXPECT_PACKAGE || 'expect');
const expect = expectModule.expect || expectModule;
const jestMock = require(process.env.JEST_MOCK_PACKAGE || 'jest-mock');
const fn = (...args) => jestMock.fn(...args);

class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }
}
class Point3 extends Point {
  constructor(x, y, z) {
    super(x, y);
    this.z = z;
  }
}
class Other {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }
}
class WithGetter {
  get area() {
    return 4;
  }
}
class MyError extends Error {
  constructor(message) {
    super(message);
    this.name = 'MyError';
  }
}
const cyclic = () => {
  const a = {name: 'a'};
  a.self = a;
  return a;
};
const sparse = () => {
  const a = [1, , 3]; // eslint-disable-line no-sparse-arrays
  return a;
};
const called = (...calls) => {
  const mock = fn((x) => (x === 'boom' ? (() => { throw new Error('boom'); })() : x * 2));
  for (const args of calls) {
    try {
      mock(...args);
    } catch (e) {
      // recorded as a throw result
    }
  }
  return mock;
};
const shared = {k: 1};
const makeTwin = () =>
  class Twin {
    constructor() {
      this.a = 1;
    }
  };
const TwinA = makeTwin();
const TwinB = makeTwin();
const sym = Symbol('s');

const rows = [];
const t = (m, make, opts = {}) => rows.push({name: `${m} ${rows.length}`, m, make, ...opts});
const p = (kind, m, value, args, opts = {}) =>
  t(m, () => [value, args], {
    p: kind,
    promise: (v) => (kind === 'resolves' ? Promise.resolve(v) : Promise.reject(v)),
    ...opts,
  });

// toBe: Object.is
t('toBe', () => [1, [1]]);
t('toBe', () => [-0, [0]]);
t('toBe', () => [0, [-0]], {not: true});
t('toBe', () => [NaN, [NaN]]);
t('toBe', () => ['a', ['a']]);
t('toBe', () => [{}, [{}]]);
t('toBe', () => [shared, [shared]]);
t('toBe', () => [1n, [1n]]);
t('toBe', () => [1n, [1]]);
t('toBe', () => [null, [undefined]]);
t('toBe', () => [true, [1]], {not: true});
t('toBe', () => [[1], [[1]]], {not: true});
// toEqual
t('toEqual', () => [{a: 1, b: [1, 2]}, [{b: [1, 2], a: 1}]]);
t('toEqual', () => [{a: undefined, b: 2}, [{b: 2}]]);
t('toEqual', () => [{b: 2}, [{a: undefined, b: 2}]]);
t('toEqual', () => [[undefined], [[]]]);
t('toEqual', () => [sparse(), [[1, undefined, 3]]]);
t('toEqual', () => [NaN, [NaN]]);
t('toEqual', () => [-0, [0]]);
t('toEqual', () => [[-0], [[0]]]);
t('toEqual', () => [new Point(1, 2), [{x: 1, y: 2}]]);
t('toEqual', () => [new Point(1, 2), [new Other(1, 2)]]);
t('toEqual', () => [new Map([[1, 'a'], [2, 'b']]), [new Map([[2, 'b'], [1, 'a']])]]);
t('toEqual', () => [new Map([[1, 'a']]), [new Map([[1, 'b']])]]);
t('toEqual', () => [new Map([[{k: 1}, 'a']]), [new Map([[{k: 1}, 'a']])]]);
t('toEqual', () => [new Set([1, 2, 3]), [new Set([3, 2, 1])]]);
t('toEqual', () => [new Set([{a: 1}, {a: 2}]), [new Set([{a: 2}, {a: 1}])]]);
t('toEqual', () => [new Set([1, 2]), [new Set([1, 2, 3])]]);
t('toEqual', () => [new Set([1]), [new Map([[1, 1]])]]);
t('toEqual', () => [new Date(0), [new Date(0)]]);
t('toEqual', () => [new Date(0), [new Date(1)]]);
t('toEqual', () => [new Date(NaN), [new Date(NaN)]]);
t('toEqual', () => [/a/g, [/a/g]]);
t('toEqual', () => [/a/g, [/a/i]]);
t('toEqual', () => [new Error('x'), [new Error('x')]]);
t('toEqual', () => [new TypeError('x'), [new Error('x')]]);
t('toEqual', () => [new Error('x'), [new Error('y')]]);
t('toEqual', () => [new Error('x'), [{message: 'x'}]]);
t('toEqual', () => [cyclic(), [cyclic()]]);
t('toEqual', () => [cyclic(), [{name: 'a', self: {name: 'a'}}]]);
t('toEqual', () => [{a: 1}, [{a: 1, b: 2}]]);
t('toEqual', () => [[1, 2], [[2, 1]]]);
t('toEqual', () => ['1', [1]]);
t('toEqual', () => [null, [undefined]]);
t('toEqual', () => [undefined, [undefined]]);
t('toEqual', () => [{a: {b: {c: [1, {d: 2}]}}}, [{a: {b: {c: [1, {d: 2}]}}}]]);
t('toEqual', () => [{a: {b: {c: [1, {d: 2}]}}}, [{a: {b: {c: [1, {d: 3}]}}}]]);
t('toEqual', () => [new Uint8Array([1, 2]), [new Uint8Array([1, 2])]]);
t('toEqual', () => [new Uint8Array([1, 2]), [new Int8Array([1, 2])]]);
t('toEqual', () => [Object.assign([1, 2], {extra: 1}), [[1, 2]]]);
t('toEqual', () => [{[sym]: 1}, [{[sym]: 1}]], {u: true});
t('toEqual', () => [{[Symbol('s')]: 1}, [{[Symbol('s')]: 1}]], {u: true});
t('toEqual', () => [{[Symbol('s')]: 1}, [{[Symbol('t')]: 1}]]);
t('toEqual', () => [Object.create(null), [{}]]);
t('toEqual', () => [{f: fn()}, [{f: fn()}]]);
t('toEqual', () => [{f: shared}, [{f: shared}]]);
t('toEqual', () => [1n, [1n]]);
// asymmetric matchers inside expected values
t('toEqual', () => [{id: 7, at: 'now'}, [{id: expect.any(Number), at: expect.any(String)}]]);
t('toEqual', () => [{id: '7'}, [{id: expect.any(Number)}]]);
t('toEqual', () => [{v: null}, [{v: expect.anything()}]]);
t('toEqual', () => [{}, [{v: expect.anything()}]]);
t('toEqual', () => [{v: 0}, [{v: expect.anything()}]]);
t('toEqual', () => [null, [expect.any(Object)]]);
t('toEqual', () => [new Point(1, 2), [expect.any(Point)]]);
t('toEqual', () => [new Point3(1, 2, 3), [expect.any(Point)]]);
t('toEqual', () => [new Point(1, 2), [expect.any(Point3)]]);
t('toEqual', () => [[1, 2, 3], [expect.arrayContaining([3, 1])]]);
t('toEqual', () => [[1, 2, 3], [expect.arrayContaining([4])]]);
t('toEqual', () => [[1], [expect.not.arrayContaining([4])]]);
t('toEqual', () => ['x', [expect.arrayContaining([])]]);
t('toEqual', () => [{a: 1, b: {c: 2}}, [expect.objectContaining({b: {c: 2}})]]);
t('toEqual', () => [{a: 1}, [expect.objectContaining({b: undefined})]]);
t('toEqual', () => [{a: 1}, [expect.not.objectContaining({a: 2})]]);
t('toEqual', () => [{m: new Map([[1, 2]])}, [expect.objectContaining({m: new Map()})]]);
t('toEqual', () => ['hello world', [expect.stringContaining('o w')]]);
t('toEqual', () => ['hello', [expect.not.stringContaining('x')]]);
t('toEqual', () => ['abc123', [expect.stringMatching(/\d{3}$/)]]);
t('toEqual', () => ['ABC', [expect.stringMatching('^abc')]]);
t('toEqual', () => [{n: 0.1 + 0.2}, [{n: expect.closeTo(0.3, 5)}]], {since: 27});
t('toEqual', () => [0.31, [expect.closeTo(0.3)]], {since: 27});
t('toEqual', () => [0.3, [expect.not.closeTo(0.3)]], {since: 27});
t('toEqual', () => [[{id: 1, tags: ['a']}], [[expect.objectContaining({tags: expect.arrayContaining(['a'])})]]]);
// toStrictEqual
t('toStrictEqual', () => [{a: undefined, b: 2}, [{b: 2}]]);
t('toStrictEqual', () => [{b: 2}, [{b: 2}]]);
t('toStrictEqual', () => [new Point(1, 2), [{x: 1, y: 2}]]);
t('toStrictEqual', () => [new Point(1, 2), [new Point(1, 2)]]);
t('toStrictEqual', () => [sparse(), [[1, undefined, 3]]]);
t('toStrictEqual', () => [[undefined], [[]]]);
t('toStrictEqual', () => [new TypeError('x'), [new Error('x')]]);
t('toStrictEqual', () => [new Error('x'), [new Error('x')]]);
t('toStrictEqual', () => [Object.create(null), [{}]]);
t('toStrictEqual', () => [new Set([{a: undefined}]), [new Set([{}])]]);
t('toStrictEqual', () => [[{a: undefined}], [[{}]]]);
t('toStrictEqual', () => [{a: [1, {b: new Date(5)}]}, [{a: [1, {b: new Date(5)}]}]]);
t('toStrictEqual', () => [{id: 1}, [{id: expect.any(Number)}]]);
// truthiness and the unary matchers
for (const v of [0, -0, '', null, undefined, NaN, 0n, false, 'a', [], {}, 1n]) t('toBeTruthy', () => [v, []]);
for (const v of [0, 'x', null]) t('toBeFalsy', () => [v, []]);
t('toBeNull', () => [null, []]);
t('toBeNull', () => [undefined, []]);
t('toBeUndefined', () => [undefined, []]);
t('toBeUndefined', () => [null, []], {not: true});
t('toBeDefined', () => [null, []]);
t('toBeDefined', () => [undefined, []]);
t('toBeNaN', () => [NaN, []]);
t('toBeNaN', () => ['NaN', []]);
t('toBeTruthy', () => [1, [2]]);
t('toBeNull', () => [1, [undefined]]);
// comparisons
t('toBeGreaterThan', () => [2, [1]]);
t('toBeGreaterThan', () => [1, [1]]);
t('toBeGreaterThanOrEqual', () => [1, [1]]);
t('toBeLessThan', () => [1n, [2]]);
t('toBeLessThanOrEqual', () => [NaN, [1]]);
t('toBeLessThanOrEqual', () => [NaN, [1]], {not: true});
t('toBeGreaterThan', () => ['2', [1]]);
t('toBeGreaterThan', () => ['2', [1]], {not: true});
t('toBeLessThan', () => [-Infinity, [-1e308]]);
t('toBeCloseTo', () => [0.1 + 0.2, [0.3]]);
t('toBeCloseTo', () => [0.3, [0.31]]);
t('toBeCloseTo', () => [0.3, [0.304, 2]]);
t('toBeCloseTo', () => [Infinity, [Infinity]]);
t('toBeCloseTo', () => [1.23, [1.2, 1]]);
t('toBeCloseTo', () => ['1', [1]]);
// toContain / toContainEqual
t('toContain', () => [[1, 2, 3], [2]]);
t('toContain', () => [[NaN], [NaN]]);
t('toContain', () => [[-0], [0]]);
t('toContain', () => [[{a: 1}], [{a: 1}]]);
t('toContain', () => [[shared], [shared]]);
t('toContain', () => ['hello', ['ell']]);
t('toContain', () => ['hello', [1]]);
t('toContain', () => [new Set(['a']), ['a']]);
t('toContain', () => [sparse(), [undefined]]);
t('toContain', () => [null, [1]]);
t('toContain', () => [{length: 0}, [1]], {u: true});
t('toContain', () => [5, [5]]);
t('toContainEqual', () => [[{a: 1}], [{a: 1}]]);
t('toContainEqual', () => [[{a: 1}], [{a: 2}]]);
t('toContainEqual', () => [new Set([[1, 2]]), [[1, 2]]]);
t('toContainEqual', () => [[new Map([[1, 1]])], [new Map([[1, 1]])]]);
// toHaveLength
t('toHaveLength', () => [[1, 2, 3], [3]]);
t('toHaveLength', () => ['abc', [3]]);
t('toHaveLength', () => ['😀', [2]]);
t('toHaveLength', () => [{length: 2}, [2]]);
t('toHaveLength', () => [{}, [0]]);
t('toHaveLength', () => [[1], [-1]]);
t('toHaveLength', () => [[1], [1.5]], {not: true});
t('toHaveLength', () => [sparse(), [3]]);
// toHaveProperty
t('toHaveProperty', () => [{a: {b: [1, {c: 2}]}}, ['a.b[1].c', 2]]);
t('toHaveProperty', () => [{a: {b: [1, {c: 2}]}}, [['a', 'b', 1, 'c'], 2]]);
t('toHaveProperty', () => [{a: {b: 1}}, ['a.c']]);
t('toHaveProperty', () => [{a: undefined}, ['a']]);
t('toHaveProperty', () => [{a: undefined}, ['a', undefined]]);
t('toHaveProperty', () => [{}, ['a', undefined]]);
t('toHaveProperty', () => [{'a.b': 1}, [['a.b'], 1]]);
t('toHaveProperty', () => [{'a.b': 1}, ['a.b']]);
t('toHaveProperty', () => [{a: {'': {b: 1}}}, ['a..b', 1]]);
t('toHaveProperty', () => [[1, 2], ['length', 2]]);
t('toHaveProperty', () => ['abc', ['length', 3]]);
t('toHaveProperty', () => ['abc', ['length', 99]]);
t('toHaveProperty', () => [{a: null}, ['a.b']]);
t('toHaveProperty', () => [{a: {b: {c: 1}}}, ['a.b', {c: 1}]]);
t('toHaveProperty', () => [{a: 1}, [[]]]);
t('toHaveProperty', () => [null, ['a']]);
t('toHaveProperty', () => [new WithGetter(), ['area', 4]], {u: true});
t('toHaveProperty', () => [{a: 1}, ['toString']], {u: true});
t('toHaveProperty', () => [{a: {b: 1}}, ['a', expect.objectContaining({b: 1})]]);
// toMatch
t('toMatch', () => ['hello world', [/wor/]]);
t('toMatch', () => ['hello world', ['lo w']]);
t('toMatch', () => ['Hello', [/^hello$/i]]);
t('toMatch', () => ['line1\nline2', [/^line2$/m]]);
t('toMatch', () => ['abc', [/(?<first>a)b/]]);
t('toMatch', () => ['2024-01-05', [/^\d{4}-\d{2}-\d{2}$/]]);
t('toMatch', () => [123, [/1/]]);
t('toMatch', () => ['abc', [1]]);
t('toMatch', () => ['a\u00e9', [/\w\w/]]);
// toMatchObject
t('toMatchObject', () => [{a: 1, b: {c: 2, d: 3}}, [{b: {c: 2}}]]);
t('toMatchObject', () => [{a: 1}, [{a: 1, b: undefined}]]);
t('toMatchObject', () => [{a: [1, 2]}, [{a: [1]}]]);
t('toMatchObject', () => [{a: [{b: 1, c: 2}]}, [{a: [{b: 1}]}]]);
t('toMatchObject', () => [[{a: 1, b: 2}], [[{a: 1}]]]);
t('toMatchObject', () => [{r: /a/}, [{r: /b/}]]);
t('toMatchObject', () => [{d: new Date(1)}, [{d: new Date(2)}]]);
t('toMatchObject', () => [{e: new Error('x')}, [{e: new Error('x')}]]);
t('toMatchObject', () => [new Point(1, 2), [{x: 1}]]);
t('toMatchObject', () => [{x: 1}, [new Point(1, 2)]]);
t('toMatchObject', () => [{a: 1}, [null]]);
t('toMatchObject', () => [cyclic(), [{name: 'a'}]]);
t('toMatchObject', () => [{m: new Map([[1, {a: 1, b: 2}]])}, [{m: new Map([[1, {a: 1}]])}]]);
// toBeInstanceOf
t('toBeInstanceOf', () => [new Point3(1, 2, 3), [Point]]);
t('toBeInstanceOf', () => [new Point(1, 2), [Point3]]);
t('toBeInstanceOf', () => [new Point(1, 2), [Object]]);
t('toBeInstanceOf', () => [[], [Array]]);
t('toBeInstanceOf', () => [new MyError('x'), [Error]]);
t('toBeInstanceOf', () => [1, [Number]]);
t('toBeInstanceOf', () => [Object.create(null), [Object]]);
t('toBeInstanceOf', () => [{}, [1]]);
// toThrow
t('toThrow', () => [() => { throw new Error('bad input'); }, []]);
t('toThrow', () => [() => 1, []]);
t('toThrow', () => [() => { throw new Error('bad input'); }, ['bad']]);
t('toThrow', () => [() => { throw new Error('bad input'); }, ['good']]);
t('toThrow', () => [() => { throw new Error('bad input'); }, [/^bad/]]);
t('toThrow', () => [() => { throw new MyError('x'); }, [MyError]]);
t('toThrow', () => [() => { throw new MyError('x'); }, [Error]]);
t('toThrow', () => [() => { throw new Error('x'); }, [MyError]]);
t('toThrow', () => [() => { throw new Error('x'); }, [new Error('x')]]);
t('toThrow', () => [() => { throw new Error('x'); }, [new Error('y')]]);
t('toThrow', () => [() => { throw new Error('x'); }, [{message: 'x'}]]);
t('toThrow', () => [() => { throw new Error('x', {cause: new Error('c')}); }, [new Error('x')]]);
t('toThrow', () => [() => { throw 'plain string'; }, ['plain']]); // eslint-disable-line no-throw-literal
t('toThrow', () => [() => { throw 42; }, ['42']]); // eslint-disable-line no-throw-literal
t('toThrow', () => [() => { throw {message: 'obj'}; }, ['obj']]); // eslint-disable-line no-throw-literal
t('toThrow', () => [() => { throw new Error('x'); }, [expect.objectContaining({message: 'x'})]]);
t('toThrow', () => [() => 1, ['x']]);
t('toThrow', () => [() => 1, [42]]);
t('toThrow', () => [1, []]);
t('toThrowError', () => [() => { throw new TypeError('t'); }, [TypeError]]);
t('toThrow', () => [() => { throw new Error('x'); }, []], {not: true});
// mock functions
t('toHaveBeenCalled', () => [called([1]), []]);
t('toHaveBeenCalled', () => [called(), []]);
t('toHaveBeenCalled', () => [called(), []], {not: true});
t('toHaveBeenCalled', () => [() => 1, []]);
t('toHaveBeenCalled', () => [called([1]), [1]]);
t('toBeCalled', () => [called([1]), []]);
t('toHaveBeenCalledTimes', () => [called([1], [2]), [2]]);
t('toHaveBeenCalledTimes', () => [called([1], [2]), [3]]);
t('toHaveBeenCalledTimes', () => [called([1]), [-1]]);
t('toBeCalledTimes', () => [called(), [0]]);
t('toHaveBeenCalledWith', () => [called([1], [2]), [2]]);
t('toHaveBeenCalledWith', () => [called([1, undefined]), [1]]);
t('toHaveBeenCalledWith', () => [called([{a: 1}]), [{a: 1}]]);
t('toHaveBeenCalledWith', () => [called([{a: 1, b: undefined}]), [{a: 1}]]);
t('toHaveBeenCalledWith', () => [called([{a: 1}]), [expect.objectContaining({a: 1})]]);
t('toHaveBeenCalledWith', () => [called([3]), [expect.any(Number)]]);
t('toBeCalledWith', () => [called([3]), ['3']]);
t('toHaveBeenLastCalledWith', () => [called([1], [2]), [2]]);
t('toHaveBeenLastCalledWith', () => [called([1], [2]), [1]]);
t('lastCalledWith', () => [called(), [1]]);
t('toHaveBeenNthCalledWith', () => [called([1], [2]), [1, 1]]);
t('toHaveBeenNthCalledWith', () => [called([1], [2]), [2, 1]]);
t('toHaveBeenNthCalledWith', () => [called([1], [2]), [3, 1]]);
t('toHaveBeenNthCalledWith', () => [called([1]), [0, 1]]);
t('nthCalledWith', () => [called([1], [2]), [2, 2]]);
t('toHaveReturned', () => [called([1]), []]);
t('toHaveReturned', () => [called(['boom']), []]);
t('toReturn', () => [called(), []]);
t('toHaveReturnedTimes', () => [called([1], ['boom'], [2]), [2]]);
t('toReturnTimes', () => [called([1]), [2]]);
t('toHaveReturnedWith', () => [called([1], [2]), [4]]);
t('toHaveReturnedWith', () => [called([1], [2]), [3]]);
t('toReturnWith', () => [called(['boom']), [undefined]]);
t('toHaveLastReturnedWith', () => [called([1], [2]), [4]]);
t('lastReturnedWith', () => [called([1], [2]), [2]]);
t('toHaveNthReturnedWith', () => [called([1], [2]), [1, 2]]);
t('nthReturnedWith', () => [called([1], [2]), [5, 2]]);
// resolves / rejects
p('resolves', 'toBe', 1, [1]);
p('resolves', 'toEqual', {a: [1]}, [{a: [1]}]);
p('resolves', 'toBe', 1, [2], {not: true});
p('rejects', 'toThrow', new Error('nope'), ['nope']);
p('rejects', 'toThrow', new Error('nope'), ['yes']);
p('rejects', 'toThrow', 'a string reason', []);
p('rejects', 'toEqual', new Error('e'), [new Error('e')]);
p('rejects', 'toBeInstanceOf', new MyError('e'), [MyError]);
p('resolves', 'toHaveLength', [1, 2], [2]);
p('resolves', 'toBeNull', null, []);

// more of the tricky corners
t('toEqual', () => [new Map([[NaN, 1]]), [new Map([[NaN, 1]])]]);
t('toEqual', () => [new Map([[-0, 1]]), [new Map([[0, 1]])]]);
t('toEqual', () => [new Set([NaN]), [new Set([NaN])]]);
t('toEqual', () => [new Map([[shared, 1]]), [new Map([[shared, 1]])]]);
t('toEqual', () => [new Map([[shared, 1]]), [new Map([[{k: 1}, 1]])]]);
t('toEqual', () => [new Set([new Set([1])]), [new Set([new Set([1])])]]);
t('toEqual', () => [(() => { const a = [1]; a.push(a); return a; })(), [(() => { const b = [1]; b.push(b); return b; })()]]);
t('toEqual', () => [{a: shared, b: shared}, [{a: {k: 1}, b: {k: 1}}]]);
t('toEqual', () => [Object.assign(new Error('x'), {code: 1}), [Object.assign(new Error('x'), {code: 2})]]);
t('toEqual', () => [{a: 1, [sym]: 2}, [{a: 1}]]);
t('toEqual', () => [[1, , 3], [[1, , 3]]]); // eslint-disable-line no-sparse-arrays
t('toEqual', () => [{x: 1}, [new Point(1)]]);
t('toEqual', () => [{f: expect.any(Function)}, [{f: () => 1}]]);
t('toEqual', () => [{f: () => 1}, [{f: expect.any(Function)}]]);
t('toEqual', () => [[expect.any(Number)], [[1]]]);
t('toEqual', () => [1n, [expect.any(BigInt)]]);
t('toEqual', () => [true, [expect.any(Boolean)]]);
t('toEqual', () => [new Date(3), [expect.any(Date)]]);
t('toEqual', () => [new MyError('x'), [expect.any(Error)]]);
t('toEqual', () => [{a: 'x'}, [{a: expect.stringMatching(/^X$/i)}]]);
t('toEqual', () => [{a: 1}, [expect.objectContaining({})]]);
t('toEqual', () => [new Point(1, 2), [expect.objectContaining({x: 1})]]);
t('toEqual', () => [new WithGetter(), [expect.objectContaining({area: 4})]], {u: true});
t('toStrictEqual', () => [new Point(1, 2), [new Other(1, 2)]]);
t('toStrictEqual', () => [Object.assign([1], {p: 1}), [[1]]]);
t('toStrictEqual', () => [new Uint8Array([1]), [new Uint8Array([1])]]);
t('toStrictEqual', () => [new Map([[1, {a: undefined}]]), [new Map([[1, {}]])]]);
t('toStrictEqual', () => [[-0], [[0]]]);
t('toStrictEqual', () => [NaN, [NaN]]);
t('toStrictEqual', () => [{d: new Date(NaN)}, [{d: new Date(NaN)}]]);
t('toStrictEqual', () => [{a: [undefined, 1]}, [{a: [, 1]}]]); // eslint-disable-line no-sparse-arrays
t('toHaveProperty', () => [new Map([[1, 2]]), ['size', 1]]);
t('toHaveProperty', () => [[1, 2, 3], ['1', 2]]);
t('toHaveProperty', () => [[1, 2, 3], [[1], 2]]);
t('toHaveProperty', () => [{a: [{b: 1}]}, ['a.0.b', 1]]);
t('toHaveProperty', () => [{a: 0}, ['a.b']]);
t('toHaveProperty', () => [{a: {b: undefined}}, ['a.b', undefined]]);
t('toHaveProperty', () => [new Error('m'), ['message', 'm']]);
t('toHaveProperty', () => [{a: {b: 2}}, ['a.b', 3]], {not: true});
t('toContain', () => [new Map([[1, 2]]), [1]]);
t('toContain', () => [new Uint8Array([5, 6]), [6]]);
t('toContain', () => ['', ['']]);
t('toContainEqual', () => [[NaN], [NaN]]);
t('toContainEqual', () => [new Map([[1, 2]]), [[1, 2]]]);
t('toMatchObject', () => [{a: {b: {c: 1, d: 2}}}, [{a: {b: {c: 1}}}]]);
t('toMatchObject', () => [{a: 1, b: 2}, [{a: expect.any(Number)}]]);
t('toMatchObject', () => [{s: new Set([1, 2])}, [{s: new Set([1])}]]);
t('toMatchObject', () => [[1, 2], [[1, 2]]]);
t('toMatchObject', () => [{a: [1, 2]}, [{a: expect.arrayContaining([2])}]]);
t('toMatchObject', () => [{a: 1}, [{}]]);
t('toMatchObject', () => [Object.create(null), [{}]]);
t('toMatch', () => ['a.b', ['.']]);
t('toMatch', () => ['x', [/y|x/g]]);
t('toMatch', () => ['ab', [/^b/y]]);
t('toMatch', () => ['😀', [/^.$/u]]);
t('toThrow', () => [() => { throw new MyError('mine'); }, [expect.any(MyError)]]);
t('toThrow', () => [() => { throw null; }, []]); // eslint-disable-line no-throw-literal
t('toThrow', () => [() => { throw undefined; }, ['undefined']]); // eslint-disable-line no-throw-literal
t('toThrow', () => [() => { throw [1, 2]; }, ['1,2']]); // eslint-disable-line no-throw-literal
t('toThrowError', () => [() => { throw new Error('multi\nline'); }, [/line$/]]);
t('toHaveBeenCalledWith', () => [called([new Map([[1, 2]])]), [new Map([[1, 2]])]]);
t('toHaveBeenCalledWith', () => [called([[1, , 3]]), [[1, undefined, 3]]]); // eslint-disable-line no-sparse-arrays
t('toHaveBeenCalledWith', () => [called([NaN]), [NaN]]);
t('toHaveBeenCalledWith', () => [called([-0]), [0]]);
t('toHaveBeenCalledWith', () => [called(), []]);
t('toHaveBeenCalledWith', () => [called([]), []]);
t('toHaveBeenCalledTimes', () => [called([1]), ['1']]);
p('resolves', 'toMatchObject', {a: 1, b: 2}, [{a: 1}]);
p('rejects', 'toMatchObject', new Error('e'), [{message: 'e'}]);
p('rejects', 'toThrow', new MyError('m'), [MyError]);
p('rejects', 'toBeTruthy', 0, [], {not: true});
t('toStrictEqual', () => [new TwinA(), [new TwinB()]]);
t('toStrictEqual', () => [new TwinA(), [new TwinA()]]);
t('toEqual', () => [new TwinA(), [new TwinB()]]);
t('toStrictEqual', () => [[new TwinA()], [[new TwinB()]]]);
t('toEqual', () => {
  const d = new Date(1);
  return [{a: d, b: d}, [{a: new Date(1), b: new Date(1)}]];
});
t('toBe', () => {
  const r = /x/;
  return [[r, r], [[r, r]]];
}, {not: true});
t('toEqual', () => [{p: Promise.resolve(1)}, [{p: Promise.resolve(2)}]], {u: true});
t('toEqual', () => [new WeakMap(), [1]]);
t('toHaveProperty', () => [{a: [1, 2]}, ['a.length', 2]]);
t('toHaveProperty', () => [{a: 'xyz'}, ['a.1', 'y']]);
t('toContainEqual', () => ['abc', ['b']]);
t('toHaveBeenCalledWith', () => [called([shared]), [shared]]);

module.exports = {rows};
