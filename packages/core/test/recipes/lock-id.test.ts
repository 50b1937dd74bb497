import { chooseIp, defaultNodeId, type HostInfo, lockId, parseLockId } from '@zoott/core/recipes';
import { describe, expect, it } from 'vitest';

const host: HostInfo = {
  ipv4: ['127.0.0.1', '8.8.4.4', '192.168.0.2'],
  pid: 1233,
  mac: '0242ac110002',
};

describe('lockId', () => {
  it('is <node_id>-<ip>-<pid>-<counter> with an intranet ip and a 10-digit counter', () => {
    const id = lockId('web', host);
    expect(id).toMatch(/^web-192\.168\.0\.2-1233-\d{10}$/);
    const next = lockId('web', host);
    expect(parseLockId(next).counter).toBe((parseLockId(id).counter ?? 0) + 1);
  });

  it('uses this process by default and the MAC as default node id', () => {
    const parsed = parseLockId(lockId());
    expect(parsed.processId).toBe(process.pid);
    expect(parsed.nodeId).toBe(defaultNodeId());
    expect(parsed.ip).toMatch(/^(\d{1,3}\.){3}\d{1,3}$|^unknownip$/);
    expect(defaultNodeId(host)).toBe('0242ac110002');
    expect(defaultNodeId({ ...host, mac: null })).toMatch(/^[0-9a-f]{12}$/);
  });

  it('prefers intranet, then public, then loopback addresses', () => {
    expect(chooseIp(['8.8.8.8', '10.1.2.3'])).toBe('10.1.2.3');
    expect(chooseIp(['172.20.0.1', '172.15.0.1'])).toBe('172.20.0.1');
    expect(chooseIp(['127.0.0.1', '8.8.8.8'])).toBe('8.8.8.8');
    expect(chooseIp(['127.0.0.1'])).toBe('127.0.0.1');
    expect(chooseIp([])).toBe('unknownip');
  });
});

describe('parseLockId', () => {
  it('reads ids whose node id contains dashes', () => {
    expect(parseLockId('web-01-10.0.0.1-42-0000000007')).toEqual({
      nodeId: 'web-01',
      ip: '10.0.0.1',
      processId: 42,
      counter: 7,
      txid: null,
    });
  });

  it('fills txid for txid: node ids', () => {
    const parsed = parseLockId('txid:123-a-b-x');
    expect(parsed.nodeId).toBe('txid:123');
    expect(parsed.txid).toBe('123');
  });

  it.each([
    ['', ['', null, null, null]],
    ['-', ['', '', null, null]],
    ['1-a', ['1', 'a', null, null]],
    ['1-a-x', ['1', 'a', null, null]],
    ['1-a-1', ['1', 'a', 1, null]],
    ['1-a-1-ff', ['1', 'a', 1, null]],
    ['1-a-1-2', ['1', 'a', 1, 2]],
  ] as Array<[string, unknown[]]>)(
    'parses %j like zkutil, null where a field does not parse',
    (input, expected) => {
      const p = parseLockId(input);
      expect([p.nodeId, p.ip, p.processId, p.counter]).toEqual(expected);
    },
  );
});
