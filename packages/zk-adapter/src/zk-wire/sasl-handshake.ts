import type { ConnectVerdict } from '../connect-verdicts.js';
import {
  answerChallenge,
  checkRspauth,
  DigestChallengeError,
  readChallenge,
} from '../sasl-digest-md5.js';
import type { ResolvedSasl } from '../security-options.js';
import type { LibClient } from './client-lib.js';
import { CM_STATE, ERR, OP } from './protocol.js';

/**
 * SASL on every connection of one node-zookeeper-client, as ZooKeeper's Java client does it:
 * after the server has answered the connect request and before any other request (the
 * credentials and watches replayed on a reconnect included), the client and server exchange
 * SASL tokens in `sasl` requests (opcode 102: GetSASLRequest out, SetSASLResponse back).
 * Only when the exchange succeeds does the connection count as connected: the library's
 * CONNECTED state is held back from its listeners, and its queue sends only SASL packets.
 *
 * A server that refuses the credentials answers AUTH_FAILED and hangs up; the client then
 * enters the library's AUTHENTICATION_FAILED state, which ends the session (no retry with
 * credentials that will not change). A connection lost mid-exchange is an ordinary
 * connection loss: the library reconnects, and the exchange starts over on the new one.
 */

const SASL_OPCODE = OP.SASL;
const CONNECTING = CM_STATE.CONNECTING;
const CONNECTED = CM_STATE.CONNECTED;
const DISCONNECTED = CM_STATE.DISCONNECTED;
const AUTHENTICATION_FAILED = CM_STATE.AUTHENTICATION_FAILED;
const AUTH_FAILED_CODE = ERR.AUTH_FAILED;
/** CONNECTION_LOSS, SESSION_EXPIRED: what the library fails a request with when its socket goes. */
const LOST = new Set<number>([ERR.CONNECTION_LOSS, ERR.SESSION_EXPIRED]);

interface Packet {
  request: unknown;
  callback: (error: { code?: number; name?: string } | null, response?: { payload: Token }) => void;
}
interface Manager {
  state: number;
  socket?: { destroy(): void; remoteAddress?: string; remotePort?: number };
  packetQueue: { shift(): Packet | undefined };
  setState(state: number): void;
  emit(event: 'state', state: number): boolean;
  onPacketQueueReadable(): void;
}

/** The reply record: `SetSASLResponse { buffer token }`. */
class Token {
  token: Buffer = Buffer.alloc(0);
  setChrootPath(): void {
    // No paths in a token.
  }
  deserialize(buffer: Buffer, offset: number): number {
    const length = buffer.readInt32BE(offset);
    this.token = length > 0 ? buffer.subarray(offset + 4, offset + 4 + length) : Buffer.alloc(0);
    return 4 + Math.max(length, 0);
  }
}

/** A `GetSASLRequest { buffer token }` request, framed by `toBuffer` once the queue gave it an xid. */
function saslRequest(token: Buffer) {
  const header = { xid: 0, type: SASL_OPCODE };
  return {
    header,
    payload: null,
    replyPayload: () => new Token(),
    toBuffer(): Buffer {
      const frame = Buffer.alloc(16 + token.length);
      frame.writeInt32BE(12 + token.length, 0);
      frame.writeInt32BE(header.xid, 4);
      frame.writeInt32BE(SASL_OPCODE, 8);
      frame.writeInt32BE(token.length, 12);
      token.copy(frame, 16);
      return frame;
    },
  };
}

/**
 * Installs the exchange on `client`. `onFailure` hears a refusal (before the session ends);
 * it is also how a connect in progress learns that retrying is pointless.
 */
export function installSaslHandshake(
  client: LibClient,
  sasl: ResolvedSasl,
  onFailure: (verdict: ConnectVerdict) => void,
): void {
  const cm = client.connectionManager as unknown as Manager;
  const queue = cm.packetQueue;
  const setState = cm.setState;
  /** SASL packets waiting for the (gated) queue; null when no exchange runs. */
  let outbox: Packet[] | null = null;

  const ungate = () => {
    outbox = null;
    // The queue's own shift again (the gate was an own property hiding the prototype's).
    delete (queue as { shift?: unknown }).shift;
  };
  const gate = () => {
    const box: Packet[] = [];
    outbox = box;
    queue.shift = () => box.shift();
  };
  const send = (token: Buffer, then: Packet['callback']) => {
    outbox?.push({ request: saslRequest(token), callback: then });
    cm.onPacketQueueReadable();
  };

  const refuse = (socket: Manager['socket'], why: string) => {
    if (cm.socket !== socket) return;
    ungate();
    onFailure({ kind: 'sasl-refused', text: why });
    setState.call(cm, AUTHENTICATION_FAILED);
    socket?.destroy();
  };

  const start = () => {
    const socket = cm.socket;
    const who = `SASL DIGEST-MD5 as ${JSON.stringify(sasl.username)}`;
    gate();
    let expected = '';
    // Replies come in order; each step checks that its connection is still the current one.
    const step = (err: Parameters<Packet['callback']>[0], reply?: { payload: Token }) => {
      if (cm.socket !== socket) return false;
      if (err) {
        if (err.code === AUTH_FAILED_CODE)
          refuse(socket, `${who}: the server refused the user or password`);
        // A lost connection: the library reconnects and the exchange starts over.
        else if (!LOST.has(err.code ?? 0))
          refuse(
            socket,
            `${who}: the server answered ${err.name ?? err.code} (does it accept SASL?)`,
          );
        return false;
      }
      return reply !== undefined;
    };
    send(Buffer.alloc(0), (err, reply) => {
      if (!step(err, reply) || !reply) return;
      if (reply.payload.token.length === 0) {
        // What a server answers when no JAAS `Server` section gives it a SASL mechanism.
        refuse(socket, `${who}: the server sent no challenge: it does not take SASL logins`);
        return;
      }
      let answer: ReturnType<typeof answerChallenge>;
      try {
        answer = answerChallenge(
          readChallenge(reply.payload.token.toString('utf8')),
          sasl.username,
          sasl.password,
        );
      } catch (failure) {
        refuse(
          socket,
          `${who}: ${failure instanceof DigestChallengeError ? failure.message : String(failure)}`,
        );
        return;
      }
      expected = answer.rspauth;
      send(Buffer.from(answer.message, 'utf8'), (err2, reply2) => {
        if (!step(err2, reply2) || !reply2) return;
        if (!checkRspauth(reply2.payload.token.toString('utf8'), expected)) {
          refuse(socket, `${who}: the server's answer does not prove it knows the password`);
          return;
        }
        ungate();
        // Now the library's listeners hear of the connection; the queue sends what waited.
        cm.emit('state', CONNECTED);
        cm.onPacketQueueReadable();
      });
    });
  };

  cm.setState = function setSaslState(this: Manager, state: number) {
    if (state === CONNECTED && this.state === CONNECTING) {
      // Replies parse as replies from here on; the listeners wait for the exchange.
      this.state = CONNECTED;
      start();
      return;
    }
    if (state === DISCONNECTED && outbox !== null) ungate();
    setState.call(this, state);
  };
}
