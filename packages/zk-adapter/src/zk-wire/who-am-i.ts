import type { LibClient } from './client-lib.js';
import { jute } from './jute-speed.js';
import { OP } from './protocol.js';

/**
 * `whoAmI` (ZooKeeper 3.7+, opcode 107): the identities the server holds for this connection,
 * each as a scheme and a user (`ip` 127.0.0.1, `digest` alice, `x509` CN=..., `sasl` bob).
 * What a client certificate or a SASL login made of the session is the server's business
 * (its auth providers, its principal rules), so only the server can say which id an ACL must
 * name; node-zookeeper-client does not know the request, so it is built here and sent through
 * the library's own queue, in order with the rest.
 */

const WHO_AM_I = OP.WHO_AM_I;

/** One identity of the connection. */
export interface ConnectionIdentity {
  scheme: string;
  id: string;
}

interface Manager {
  queue(
    request: unknown,
    callback: (error: unknown, response?: { payload: WhoAmIReply }) => void,
  ): void;
}
interface Protocol {
  Request: new (header: unknown, payload: unknown) => { replyPayload?: () => unknown };
  protocol: { RequestHeader: new () => { type: number } };
}
const typedJute = jute as unknown as Protocol;

/** `WhoAmIResponse { vector<ClientInfo { ustring authScheme; ustring user }> clientInfo }`. */
class WhoAmIReply {
  identities: ConnectionIdentity[] = [];
  setChrootPath(): void {
    // Identities carry no paths.
  }
  deserialize(buffer: Buffer, offset: number): number {
    let at = offset;
    const string = () => {
      const length = buffer.readInt32BE(at);
      at += 4;
      if (length < 0) return '';
      const text = buffer.toString('utf8', at, at + length);
      at += length;
      return text;
    };
    const count = buffer.readInt32BE(at);
    at += 4;
    for (let i = 0; i < count; i++) {
      const scheme = string();
      this.identities.push({ scheme, id: string() });
    }
    return at - offset;
  }
}

/** @internal Sends whoAmI; `done` gets the connection's identities. */
export function sendWhoAmI(
  client: LibClient,
  done: (err: unknown, identities?: ConnectionIdentity[]) => void,
): void {
  const header = new typedJute.protocol.RequestHeader();
  header.type = WHO_AM_I;
  const request = new typedJute.Request(header, null);
  request.replyPayload = () => new WhoAmIReply();
  (client.connectionManager as unknown as Manager).queue(request, (err, response) =>
    err ? done(err) : done(null, response?.payload.identities ?? []),
  );
}
