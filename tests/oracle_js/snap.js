'use strict';
// Writes a .snap file with jest-snapshot's own writer (tricky keys and values), reads it back with jest's reader,
// and prints what jest read as JSON: the decider's parser must read the same file to the same values.
// Usage: node snap.js <path of the .snap to write> (NODE_PATH names node_modules holding jest-snapshot 29).
const path = require('path');
const utils = require(path.join(path.dirname(require.resolve(process.env.JEST_SNAPSHOT_PACKAGE || 'jest-snapshot')), 'utils.js'));

const data = {
  'plain 1': '"one line"',
  'renders `tick` 1': '\n<View>\n  <Text>\n    a\\b ${x} `y`\n  </Text>\n</View>\n',
  'unicode é 😀 1': '"\u00e9\u{1F600}"',
  'carriage\rreturn 1': 'line1\r\nline2\rline3',
  'dollar $ {not} 1': '$ { } $$ ${',
  'backslashes \\ 1': '\\\\n \\` \\${',
  'empty 1': '',
};
utils.saveSnapshotFile(data, process.argv[2]);
const read = utils.getSnapshotData(process.argv[2], 'none').data;
process.stdout.write(JSON.stringify(read));
