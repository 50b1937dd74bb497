import { describe, expect, it } from 'vitest';
import { AmqpAccessError, accessFailure, loginOf } from '../src/index.js';

/**
 * The errors as amqplib reports them (their texts are the ones a real RabbitMQ 3.10 gives:
 * apps/amqp-bridge/test/bridge-login.zk.test.ts gets them from one).
 */
const LOGIN =
  'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."';
const VHOST = 'Expected ConnectionOpenOk; got <ConnectionClose channel:0>';
const QUEUE =
  "Operation failed: BasicConsume; 403 (ACCESS-REFUSED) with message \"ACCESS_REFUSED - access to queue 'races' in vhost 'prod' refused for user 'bridge'\"";

const URL = 'amqps://bridge:s3cret@mq1:5671/prod';
const SHOWN = 'amqps://bridge:****@mq1:5671/prod';

describe('accessFailure: which connection errors are refusals by RabbitMQ, and of what', () => {
  it('a refused login names the user, the broker and its reason, never the password', () => {
    const err = accessFailure(new Error(LOGIN), URL, SHOWN);
    expect(err).toBeInstanceOf(AmqpAccessError);
    expect(err).toMatchObject({
      kind: 'login',
      user: 'bridge',
      vhost: 'prod',
      code: 'AMQP_ACCESS',
    });
    expect(err?.message).toBe(
      'RabbitMQ at amqps://bridge:****@mq1:5671/prod refused the login of user "bridge": ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile. (a wrong password, or no such user: RabbitMQ does not say which)',
    );
    expect(err?.message).not.toContain('s3cret');
  });

  it('a 403 at login for another reason is a login refusal in its own words only', () => {
    const other =
      'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - User \'guest\' can only connect via localhost"';
    const err = accessFailure(new Error(other), 'amqp://mq1', 'amqp://mq1');
    expect(err?.kind).toBe('login');
    expect(err?.message).toMatch(
      /user "guest": ACCESS_REFUSED - User 'guest' can only connect via localhost$/,
    );
  });

  it('a close in answer to connection.open is the vhost refused, naming vhost and user', () => {
    const err = accessFailure(new Error(VHOST), URL, SHOWN);
    expect(err).toMatchObject({ kind: 'vhost', user: 'bridge', vhost: 'prod' });
    expect(err?.message).toMatch(
      /refused to open virtual host "prod" for user "bridge": the vhost does not exist, or the user has no permissions on it/,
    );
  });

  it('a 403 on a channel (a queue the user may not declare or read) is a permission refusal', () => {
    const err = accessFailure(Object.assign(new Error(QUEUE), { code: 403 }), URL, SHOWN);
    expect(err).toMatchObject({ kind: 'permission', user: 'bridge', vhost: 'prod' });
    expect(err?.message).toBe(
      `RabbitMQ at ${SHOWN} refused user "bridge" on virtual host "prod": ACCESS_REFUSED - access to queue 'races' in vhost 'prod' refused for user 'bridge'`,
    );
  });

  it('a broker that is down, a missing queue, a TLS failure or anything else is no refusal (retried or reported as is)', () => {
    const coded = (message: string, code: unknown) => Object.assign(new Error(message), { code });
    expect(accessFailure(coded('connect ECONNREFUSED', 'ECONNREFUSED'), URL, SHOWN)).toBeNull();
    expect(
      accessFailure(new Error('Socket closed abruptly during opening handshake'), URL, SHOWN),
    ).toBeNull();
    expect(
      accessFailure(coded('Operation failed: QueueDeclare; 404 (NOT-FOUND)', 404), URL, SHOWN),
    ).toBeNull();
    expect(
      accessFailure(coded('self-signed certificate', 'SELF_SIGNED_CERT_IN_CHAIN'), URL, SHOWN),
    ).toBeNull();
    expect(accessFailure('a string', URL, SHOWN)).toBeNull();
  });
});

describe('loginOf: the user and vhost a URL logs in with, as amqplib reads them', () => {
  it('no credentials is guest; no path, or a bare /, is the vhost /', () => {
    expect(loginOf('amqp://mq1:5672')).toEqual({ user: 'guest', vhost: '/' });
    expect(loginOf('amqp://bob:pw@mq1:5672/')).toEqual({ user: 'bob', vhost: '/' });
  });

  it('escapes are decoded: %2F is a / in a vhost name', () => {
    expect(loginOf('amqp://b%40ob:pw@mq1/%2F')).toEqual({ user: 'b@ob', vhost: '/' });
    expect(loginOf('amqp://bob:pw@mq1/team%2Fprod')).toEqual({ user: 'bob', vhost: 'team/prod' });
  });
});
