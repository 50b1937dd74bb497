/**
 * One namespace, several principals, through the `zoott` binary on a real ZooKeeper:
 * `init` of a second set of credentials beside a locked world, a node someone made first
 * (refused with the command only an administrator can run), `doctor` on squatted nodes,
 * `doctor --repair` keeping every byte and going on past what it cannot move, and the
 * upgrade of a namespace zoott 0.1.0 made. A second client with its own digest credentials
 * (mallory) plays the squatter.
 */
import { randomUUID } from 'node:crypto';
import { type Acl, type Coordinator, digestAcl, Perms } from '@zoott/core';
import { readQuarantined, SHARED_ACL } from '@zoott/core/internal';
import { legacyInit, legacyReplies } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, freshConnect, json, session, zoott } from './helpers.js';

const SLOW = 120_000;
const MALLORY: Acl[] = [digestAcl('mallory', 'pw-m', 'cdrwa')];

beforeAll(() => assertBuilt());

const opened: Coordinator[] = [];
afterAll(async () => {
  await Promise.allSettled(opened.map((c) => c.close()));
});

/** A session with digest credentials whose nodes carry their ACL. */
async function as(connect: string, user: string, password: string): Promise<Coordinator> {
  const c = await connectZk(connect, {
    auth: [{ scheme: 'digest', auth: `${user}:${password}` }],
    defaultAcl: [digestAcl(user, password, 'cdrwa')],
  });
  opened.push(c);
  return c;
}

describe('worlds of several principals in one namespace', { timeout: SLOW }, () => {
  it('init makes the chroot shared; a second set of credentials inits beside a locked world', async () => {
    const connect = `${inject('zkConnect')}/ns-${randomUUID()}`;
    const alice = await zoott(['--connect', connect, '--auth', 'alice:pa', '--json', 'init', 'a']);
    expect(alice.code, alice.stderr).toBe(0);
    expect(json<{ namespace: { created: string[] } }>(alice).namespace.created).toContain(
      '/zoott_leaders',
    );
    const bob = await zoott(['--connect', connect, '--auth', 'bob:pb', 'init', 'b']);
    expect(bob.code, bob.stderr).toBe(0);
    expect(bob.stdout).toMatch(/world b ready/);
    const raw = await session(inject('zkConnect'));
    const chroot = connect.slice(connect.indexOf('/'));
    expect((await raw.getAcl(chroot)).acl).toEqual([...SHARED_ACL]);
    // Each world is its credentials' alone.
    const peek = await zoott(['--connect', connect, '--auth', 'bob:pb', '--world', 'a', 'status']);
    expect(peek.code).toBe(4);
  });

  it('a node someone made first: init exits 4 naming it and what an administrator must run', async () => {
    const connect = await freshConnect();
    const mallory = await as(connect, 'mallory', 'pw-m');
    await mallory.create('/zoott_leaders', undefined, {
      acl: [...MALLORY, { scheme: 'world', id: 'anyone', perms: Perms.READ }],
    });
    const r = await zoott(['--connect', connect, '--auth', 'alice:pa', 'init', 'a']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /error: \/zoott_leaders, shared by every world of the namespace, has digest:mallory:… cdrwa, world:anyone r, which does not let these credentials create \/zoott_leaders\/a in it/,
    );
    const chroot = connect.slice(connect.indexOf('/'));
    expect(r.stderr).toContain(
      `hint: these credentials cannot fix it; an administrator must run: setAcl ${chroot}/zoott_leaders world:anyone:cr   (zkCli.sh, as digest:mallory:… (ADMIN on it) or a ZooKeeper super user)`,
    );
    await mallory.setAcl('/zoott_leaders', SHARED_ACL);
    expect((await zoott(['--connect', connect, '--auth', 'alice:pa', 'init', 'a'])).code).toBe(0);
  });

  it('doctor reports squatted nodes with the commands, --repair leaves them (exit 7)', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, '--world', 'open', ...args]);
    expect((await z(['init', 'open', '--buckets', '2'])).code).toBe(0);
    const mallory = await as(connect, 'mallory', 'pw-m');
    const squatted = [
      '/zoott_leaders/open/scheduler',
      '/zoott_schedules/open',
      '/zoott_workers/open',
    ];
    for (const path of squatted) await mallory.setAcl(path, MALLORY);
    await mallory.create('/zoott_~replies/open/_default', undefined, { acl: MALLORY });
    const all = [...squatted, '/zoott_~replies/open/_default'].sort();
    const report = await z(['--json', 'doctor', 'open']);
    expect(report.code, report.stderr).toBe(7);
    const findings = json<{ findings: { kind: string; path: string; admin?: string }[] }>(
      report,
    ).findings;
    expect(findings.filter((f) => f.kind === 'squatted').map((f) => f.path)).toEqual(all);
    const chroot = connect.slice(connect.indexOf('/'));
    for (const f of findings)
      expect(f.admin).toBe(
        `setAcl -R ${chroot}${f.path} world:anyone:cdrwa   (zkCli.sh, as a ZooKeeper super user (nobody holds ADMIN on it))`,
      );
    const human = await z(['doctor', 'open', '--repair']);
    expect(human.code).toBe(7);
    expect(human.stdout).toMatch(
      /squatted +\/zoott_leaders\/open\/scheduler +an administrator \(below\)/,
    );
    expect(human.stdout).toMatch(
      /4 node\(s\) these credentials cannot fix; an administrator must run:/,
    );
    for (const path of all) expect(human.stdout).toContain(`  setAcl -R ${chroot}${path} `);
    expect(human.stdout).toMatch(/world open: 4 problem\(s\), 0 moved to \/zoott_q\/open, 4 left/);
  });

  it('doctor --repair keeps non-UTF-8 bytes, moves an oversized node and goes on past one it cannot move', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, '--world', 'bin', ...args]);
    expect((await z(['init', 'bin', '--buckets', '1'])).code).toBe(0);
    const raw = await session(connect);
    const bytes = new Uint8Array(900_000).map((_, i) => (i * 37 + 0x80) % 256);
    await raw.create('/zoott_c/bin/0000/big', bytes);
    await raw.create('/zoott_c/bin/0000/small', Uint8Array.from([0xff, 0xfe, 0, 0x80]));
    await raw.create('/zoott_f/bin/0000/stuck', Uint8Array.from([0xc3]));
    await raw.setAcl('/zoott_f/bin/0000', [
      { scheme: 'world', id: 'anyone', perms: Perms.ALL & ~Perms.DELETE },
    ]);
    const r = await z(['--json', 'doctor', 'bin', '--repair']);
    expect(r.code, r.stderr).toBe(7);
    const out = json<{
      moved: { from: string; to: string }[];
      notMoved: { path: string; why: string; error?: string }[];
      left: number;
    }>(r);
    expect(out.moved.map((m) => m.from)).toEqual([
      '/zoott_c/bin/0000/big',
      '/zoott_c/bin/0000/small',
    ]);
    expect(out.notMoved).toEqual([
      {
        path: '/zoott_f/bin/0000/stuck',
        kind: 'corrupt',
        why: 'failed',
        error: expect.stringMatching(/^NO_AUTH/),
      },
    ]);
    expect(out.left).toBeGreaterThan(0);
    const big = await readQuarantined(raw, out.moved[0]!.to);
    expect(Buffer.from(big.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(Array.from((await readQuarantined(raw, out.moved[1]!.to)).bytes)).toEqual([
      0xff, 0xfe, 0, 0x80,
    ]);
    // The same in words: each node's outcome in the table, the error for the one left.
    const human = await z(['doctor', 'bin', '--repair']);
    expect(human.code).toBe(7);
    expect(human.stdout).toMatch(/\/zoott_f\/bin\/0000\/stuck +not moved: failed \(NO_AUTH/);
    expect(human.stdout).toMatch(/1 could not be moved/);
  });

  it('a namespace zoott 0.1.0 made locked: the owner inits first, its results move, then others init', async () => {
    const connect = await freshConnect();
    const alice = await as(connect, 'alice', 'pa');
    await legacyInit(alice, 'a', 2);
    await legacyReplies(alice, 'a', '_default', 'rk', [{ n: 1 }, { n: 2 }]);
    const bob = await zoott(['--connect', connect, '--auth', 'bob:pb', 'init', 'b']);
    expect(bob.code).toBe(4);
    expect(bob.stderr).toMatch(/error: \/zoott_\w+, shared by every world of the namespace, has/);
    const doctor = await zoott([
      '--connect',
      connect,
      '--auth',
      'alice:pa',
      '--json',
      'doctor',
      'a',
    ]);
    expect(doctor.code).toBe(7);
    const kinds = json<{ findings: { kind: string; path: string; repair: string }[] }>(
      doctor,
    ).findings;
    expect(kinds).toContainEqual(
      expect.objectContaining({ kind: 'legacy', path: '/zoott_r/_default/rk', repair: 'migrate' }),
    );
    expect(kinds).toContainEqual(
      expect.objectContaining({ kind: 'missing', path: '/zoott_~replies/a' }),
    );
    const init = await zoott(['--connect', connect, '--auth', 'alice:pa', 'init', 'a']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(
      /\/zoott_p: shared by every world of the namespace, given world:anyone cr \(was digest:alice:… cdrwa\)/,
    );
    expect(init.stdout).toMatch(
      /moved 2 result\(s\) of zoott 0\.1\.0 into \/zoott_~replies\/a \(1 old reply directory removed\)/,
    );
    for (const n of [1, 2]) {
      const got = await zoott([
        '--connect',
        connect,
        '--auth',
        'alice:pa',
        '--world',
        'a',
        'wait',
        'rk',
        '--any',
        '--timeout',
        '5',
      ]);
      expect(got.code, got.stderr).toBe(0);
      expect(JSON.parse(got.stdout)).toEqual({ n });
    }
    expect((await zoott(['--connect', connect, '--auth', 'bob:pb', 'init', 'b'])).code).toBe(0);
    const clean = await zoott(['--connect', connect, '--auth', 'alice:pa', 'doctor', 'a']);
    expect(clean.code, clean.stdout).toBe(0);
  });
});
