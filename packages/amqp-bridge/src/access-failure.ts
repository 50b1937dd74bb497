/**
 * What RabbitMQ refused: the login (`login`: a wrong password or an unknown user; the broker
 * does not say which), the virtual host (`vhost`: it does not exist, or the user has no
 * permissions on it), or the queues (`permission`: the user may not declare or consume them).
 */
export type AccessFailureKind = 'login' | 'vhost' | 'permission';

/**
 * RabbitMQ refused this bridge's credentials or their rights. Retrying with the same URL
 * cannot help before an operator changes something, so a starting bridge fails with this
 * instead of retrying: `startAmqpBridge` rejects with it. It names the user and the vhost,
 * never the password.
 */
export class AmqpAccessError extends Error {
  readonly code = 'AMQP_ACCESS';

  constructor(
    readonly kind: AccessFailureKind,
    /** The user the bridge logged in as (`guest` when the URL names none, as amqplib does). */
    readonly user: string,
    /** The virtual host it asked for (`/` when the URL has no path). */
    readonly vhost: string,
    message: string,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'AmqpAccessError';
  }
}

/** `%xx` decoded, or the text as is when it is no valid escape. */
function unescaped(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The user and virtual host a URL logs in with, read as amqplib reads them: no user and no
 * password is `guest`; no path (or `/`) is the vhost `/`; `%2F` is a `/` in a vhost name.
 */
export function loginOf(url: string): { user: string; vhost: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { user: 'guest', vhost: '/' };
  }
  const user =
    parsed.username === '' && parsed.password === '' ? 'guest' : unescaped(parsed.username);
  const path = parsed.pathname.slice(1);
  return { user, vhost: path === '' ? '/' : unescaped(path) };
}

/**
 * amqplib's message when the broker closes the connection in answer to the login
 * (connection.start-ok): RabbitMQ's reply code and text, which for a refused login is
 * `403 (ACCESS-REFUSED)` and `ACCESS_REFUSED - Login was refused using ...`.
 */
const LOGIN_REFUSED =
  /^Handshake terminated by server: 403 \(ACCESS-REFUSED\) with message "(.*)"$/s;

/**
 * amqplib's message when the broker closes the connection in answer to connection.open,
 * the request for the vhost. amqplib drops the broker's reply there; RabbitMQ closes at
 * this step only to refuse the vhost (it does not exist, the user has no permissions on it,
 * or a connection limit of the vhost or the user is reached).
 */
const VHOST_REFUSED = /^Expected ConnectionOpenOk; got <ConnectionClose\b/;

/** The broker's own text in an amqplib channel error (`... with message "<text>"`). */
const BROKER_TEXT = /with message "(.*)"$/s;

/**
 * The error as an {@link AmqpAccessError} when RabbitMQ refused the login, the vhost or (403
 * on a channel: declaring or consuming a queue) the user's rights, else `null` (the broker
 * is down, a TLS failure, ...). `url`: the URL the bridge connects with (its user and vhost
 * are named; its password is not); `shownUrl`: the same with its password masked.
 */
export function accessFailure(err: unknown, url: string, shownUrl: string): AmqpAccessError | null {
  if (!(err instanceof Error)) return null;
  const { user, vhost } = loginOf(url);
  const login = LOGIN_REFUSED.exec(err.message);
  if (login)
    return new AmqpAccessError(
      'login',
      user,
      vhost,
      `RabbitMQ at ${shownUrl} refused the login of user "${user}": ${login[1]}${
        /Login was refused/.test(login[1] ?? '')
          ? ' (a wrong password, or no such user: RabbitMQ does not say which)'
          : ''
      }`,
      { cause: err },
    );
  if (VHOST_REFUSED.test(err.message))
    return new AmqpAccessError(
      'vhost',
      user,
      vhost,
      `RabbitMQ at ${shownUrl} refused to open virtual host "${vhost}" for user "${user}": the vhost does not exist, or the user has no permissions on it (or a connection limit of the vhost or the user is reached)`,
      { cause: err },
    );
  if ((err as { code?: unknown }).code === 403) {
    const said = BROKER_TEXT.exec(err.message)?.[1] ?? err.message;
    return new AmqpAccessError(
      'permission',
      user,
      vhost,
      `RabbitMQ at ${shownUrl} refused user "${user}" on virtual host "${vhost}": ${said}`,
      { cause: err },
    );
  }
  return null;
}
