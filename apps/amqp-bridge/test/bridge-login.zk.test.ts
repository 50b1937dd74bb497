import { until } from '@zoott/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, exitsAtStart, producer, resultInbox } from './harness.js';
import { type TestWorld, testWorld } from './world.js';

/** Passwords no log line or message may show. */
const PASSWORD = 'Bridge-Secret-4711';
const WRONG = 'Not-The-Password-0815';
const ROTATED = 'Rotated-Secret-2342';

/**
 * The bridge against a broker that refuses it: a wrong password, an unknown user, a vhost
 * that does not exist or is not permitted, a queue it may not read. At start it exits 5
 * naming what was refused, with a hint and without the password, having queued and consumed
 * nothing; once it has been connected, a refusal is retried. Users, vhosts and permissions
 * are set up with `rabbitmqctl` on a broker of the test's own.
 */
describe('zoott-amqp-bridge refused by RabbitMQ (login, vhost, permissions)', {
  timeout: 180_000,
}, () => {
  let w: TestWorld;
  /** The test's client on the vhost `other`, where guest may do anything and `bridge` nothing. */
  let other: Awaited<ReturnType<typeof producer>>;

  const ctl = (...args: string[]) => w.broker.rabbitmqctl(args);
  const url = (user: string, password: string, vhost = '') =>
    `amqp://${user}:${password}@127.0.0.1:${w.broker.port}${vhost === '' ? '' : `/${encodeURIComponent(vhost)}`}`;
  const queues = (name: string) => ['--job-queue', `${name}-jobs`, '--race-queue', `${name}-races`];

  beforeAll(async () => {
    assertBuilt();
    // Its own broker: rabbitmqctl needs one this test started.
    w = await testWorld(inject('zkConnect'), { own: true });
    await ctl('add_user', 'bridge', PASSWORD);
    await ctl('set_permissions', '-p', '/', 'bridge', '.*', '.*', '.*');
    await ctl('add_vhost', 'other');
    await ctl('set_permissions', '-p', 'other', 'guest', '.*', '.*', '.*');
    other = await producer(`${w.broker.url}/other`);
  });
  afterAll(async () => {
    await other?.conn.close().catch(() => {});
    await w?.close();
  });

  /**
   * A job waits in `<name>-jobs` (on `client`'s vhost); a bridge started with `amqpUrl` must
   * exit 5 before consuming it: the job is still in its queue, unconsumed, and not in the
   * world. The URL goes in through the environment, as the README advises for a password.
   * Resolves to what the bridge wrote, which must not hold a password.
   */
  async function refused(
    name: string,
    amqpUrl: string,
    client: Awaited<ReturnType<typeof producer>> = w.client,
  ): Promise<string> {
    await client.ch.assertQueue(`${name}-jobs`, { durable: true });
    const body = JSON.stringify({ executable: '/usr/bin/true', routingkey: `rk-${name}` });
    await client.post(`${name}-jobs`, body, { messageId: `${name}-1` });
    const env = { ZOOTT_CONNECT: w.connect, ZOOTT_WORLD: w.world, ZOOTT_AMQP_URL: amqpUrl };
    const out = await exitsAtStart(queues(name), env, 5);
    // A job a consumer held goes back when the broker has seen its connection close, which
    // may be just after the bridge exited: waited for, not assumed.
    await until('the job back in its queue, and no consumer', async () => {
      const q = await client.ch.checkQueue(`${name}-jobs`);
      return q.messageCount === 1 && q.consumerCount === 0 ? q : undefined;
    });
    expect(await w.hasBridgedTask(body, `${name}-1`)).toBe(false);
    for (const secret of [PASSWORD, WRONG, ROTATED]) expect(out).not.toContain(secret);
    return out;
  }

  it('a wrong password: exit 5 naming the user (never the password) with a hint; nothing consumed', async () => {
    const out = await refused('badpass', url('bridge', WRONG));
    expect(out).toMatch(
      /RabbitMQ at amqp:\/\/bridge:\*\*\*\*@127\.0\.0\.1:\d+ refused the login of user "bridge": ACCESS_REFUSED - Login was refused/,
    );
    expect(out).toMatch(/a wrong password, or no such user/);
    expect(out).toMatch(/check the user and password in --amqp-url/);
    expect(out).toMatch(/rabbitmqctl authenticate_user 'bridge' <password>/);
  });

  it('a user the broker does not know: the same exit 5, naming that user', async () => {
    const out = await refused('nouser', url('nobody', WRONG));
    expect(out).toMatch(/refused the login of user "nobody"/);
  });

  it('a vhost that does not exist: exit 5 naming the vhost and the user, with the way to fix it', async () => {
    const out = await refused('novhost', url('bridge', PASSWORD, 'nosuch'));
    expect(out).toMatch(
      /RabbitMQ at amqp:\/\/bridge:\*\*\*\*@127\.0\.0\.1:\d+\/nosuch refused to open virtual host "nosuch" for user "bridge": the vhost does not exist, or the user has no permissions on it/,
    );
    expect(out).toMatch(/rabbitmqctl list_vhosts/);
    expect(out).toMatch(/rabbitmqctl set_permissions -p 'nosuch' 'bridge'/);
  });

  it('a vhost the user has no permissions on: exit 5, and the job waiting there stays', async () => {
    const out = await refused('notpermitted', url('bridge', PASSWORD, 'other'), other);
    expect(out).toMatch(/refused to open virtual host "other" for user "bridge"/);
    expect(out).toMatch(/set_permissions -p 'other' 'bridge'/);
  });

  it('no right to read the race queue: exit 5 naming it; the job the job queue handed out is not queued into the world', async () => {
    await ctl('add_user', 'reader', PASSWORD);
    // Configure and write anything, read only the job queue: the race queue's consume fails
    // after the job queue's consumer got the waiting job.
    await ctl('set_permissions', '-p', '/', 'reader', '.*', '.*', '^perm-jobs$');
    const out = await refused('perm', url('reader', PASSWORD));
    expect(out).toMatch(
      /refused user "reader" on virtual host "\/": ACCESS_REFUSED - access to queue 'perm-races' in vhost '\/' refused for user 'reader'/,
    );
    expect(out).toMatch(/read permission to consume them/);
  });

  it('a bridge that was connected and then refused (its password changed) retries with a warning, and is back once the password is', async () => {
    await ctl('add_user', 'rotating', PASSWORD);
    await ctl('set_permissions', '-p', '/', 'rotating', '.*', '.*', '.*');
    const bridge = await w.bridge({ ZOOTT_AMQP_URL: url('rotating', PASSWORD) }, queues('rotate'));
    await ctl('change_password', 'rotating', ROTATED);
    await ctl('close_all_user_connections', 'rotating', 'password changed');
    const line = await bridge.logLine(
      (l) => l.msg === 'RabbitMQ refused access; retrying',
      'the refused login after the password changed',
    );
    expect(line.level).toBe(40); // warn
    expect(line.kind).toBe('login');
    expect(line.err).toMatch(/refused the login of user "rotating"/);
    expect(bridge.child.exitCode).toBeNull();

    await ctl('change_password', 'rotating', PASSWORD);
    // The second `connected` line: the first, from the start, is counted when seen again.
    let connections = 0;
    await bridge.logLine(
      (l) => l.msg === 'connected to RabbitMQ' && ++connections === 2,
      'connected again',
    );
    await w.client.ch.assertExchange('results', 'direct', { durable: false });
    const inbox = await resultInbox(w.client.ch, 'results', 'rk-rotate');
    await w.client.post('rotate-jobs', {
      executable: '/usr/bin/echo',
      arguments: ['back'],
      exchange: 'results',
      routingkey: 'rk-rotate',
    });
    const result = JSON.parse((await inbox.next()).content.toString()) as { stdout: string };
    expect(result.stdout).toBe('back\n');
    for (const secret of [PASSWORD, ROTATED]) expect(bridge.output()).not.toContain(secret);
  });
});
