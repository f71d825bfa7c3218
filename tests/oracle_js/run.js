'use strict';
// Runs every row of rows.js with real `expect` and prints one assertion record per row (docs/oracle.md), as JSON
// lines: the decider must reach the same outcome as `inrealm`. Usage: JEST_MAJOR=29 node run.js, with NODE_PATH naming
// node_modules and EXPECT_PACKAGE / JEST_MOCK_PACKAGE the names that major's `expect` and `jest-mock` are installed as.
const expectModule = require(process.env.EXPECT_PACKAGE || 'expect');
const expect = expectModule.expect || expectModule;
const {makeEncoder} = require('./encode.js');
const {rows} = require('./rows.js');

const THROW_MATCHERS = new Set(['toThrow', 'toThrowError']);

async function record(row, seq) {
  const made = row.make();
  const received = made[0];
  const args = made[1] || [];
  const enc = makeEncoder();
  let encodedReceived;
  if (THROW_MATCHERS.has(row.m) && !row.p && typeof received === 'function') {
    let threw = false;
    let value;
    try {
      received();
    } catch (e) {
      threw = true;
      value = e;
    }
    encodedReceived = {t: 'thrown', threw, value: enc(value)};
  } else {
    encodedReceived = enc(received);
  }
  const encodedArgs = args.map((a) => enc(a));
  let target = expect(row.p ? row.promise(received) : received);
  if (row.p) target = target[row.p];
  if (row.not) target = target.not;
  let inrealm = 'pass';
  try {
    await target[row.m](...args);
  } catch (e) {
    inrealm = 'fail';
  }
  const record = {
    test: row.name,
    seq,
    matcher: row.m,
    not: !!row.not,
    promise: row.p || '',
    received: encodedReceived,
    expected: encodedArgs,
    inrealm,
    undecidable: !!row.u,
  };
  if (row.p) record.settled = row.p === 'resolves' ? 'resolved' : 'rejected';
  return record;
}

const MAJOR = Number(process.env.JEST_MAJOR || '29');

(async () => {
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    if (rows[i].since && rows[i].since > MAJOR) continue;
    if (typeof expect(0)[rows[i].m] !== 'function') continue; // an alias this major removed (jest 30)
    try {
      out.push(await record(rows[i], i));
    } catch (e) {
      out.push({test: rows[i].name, seq: i, harness_error: String(e && e.stack)});
    }
  }
  process.stdout.write(out.map((r) => JSON.stringify(r)).join('\n') + '\n');
})();
