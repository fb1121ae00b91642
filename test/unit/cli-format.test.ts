// How the CLI shows sizes and a transfer's progress (`atrium storage cp`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytes, transferLine } from '../../src/cli/api.ts';

test('sizes for people: bytes, then kB, MB, GB with one decimal', () => {
  assert.deepEqual([0, 999, 1000, 1_234_567, 5_000_000_000].map(bytes), ['0 B', '999 B', '1.0 kB', '1.2 MB', '5.0 GB']);
});

test('a transfer line draws a bar of its share, the percent and the bytes; without a size, the bytes so far', () => {
  assert.equal(transferLine('a.bin', 0, 2_000_000), 'a.bin  [------------------------]   0%  0 B / 2.0 MB');
  assert.equal(transferLine('a.bin', 1_000_000, 2_000_000), 'a.bin  [############------------]  50%  1.0 MB / 2.0 MB');
  assert.equal(transferLine('a.bin', 2_000_000, 2_000_000), 'a.bin  [########################] 100%  2.0 MB / 2.0 MB');
  assert.equal(transferLine('a.bin', 3_000, undefined), 'a.bin  3.0 kB');
  assert.equal(transferLine('a.bin', 3_000, 0), 'a.bin  3.0 kB', 'an unknown (0) size');
});
