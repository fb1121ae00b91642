// What counts as this machine, for the bind-address check and for clients of the development mailbox.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopback } from '../../src/platform/http/loopback.ts';

test('loopback addresses and the name localhost are loopback', () => {
  for (const address of ['127.0.0.1', '127.255.0.9', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', 'localhost', 'LOCALHOST']) {
    assert.equal(isLoopback(address), true, address);
  }
});

test('everything else is not', () => {
  for (const address of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.10', '203.0.113.7', '128.0.0.1', '::2', '::ffff:10.0.0.1', 'fe80::1', 'localhost.example.com', 'example.com', '']) {
    assert.equal(isLoopback(address), false, address);
  }
});
