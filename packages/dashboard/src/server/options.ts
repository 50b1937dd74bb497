import { randomBytes } from 'node:crypto';
import { type Coordinator, type EngineLogger, ZoottError } from '@zoott/core';
import { validateWorldName } from '@zoott/core/internal';

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  /** An open coordinator (its chroot is the application namespace). The dashboard does not close it. */
  coordinator: Coordinator;
  /** World shown first; default the first world found. */
  world?: string;
  /** TCP port (default 7070; 0 picks a free one). */
  port?: number;
  /** Interface to bind (default 127.0.0.1). Anything but loopback requires `token`. */
  host?: string;
  /** Hides retry and cancel in the page and refuses them in the API (403). */
  readOnly?: boolean;
  /**
   * Access token, checked on every request (`Authorization: Bearer <token>` or `?token=`;
   * never a cookie, which other ports of the host would receive). Required when `host` is not a loopback
   * address; at least 12 characters. On loopback a random one is made when none is given:
   * any local process or user could otherwise read the worlds and retry or cancel tasks.
   */
  token?: string;
  /** Serve without a token. Allowed on a loopback address only. */
  noToken?: boolean;
  /** Where warnings go (default: console). */
  logger?: EngineLogger;
  /** Folder holding the built `app.js` and `app.css` (default: the package's `dist/public`). */
  assetsDir?: string;
}

/** A running dashboard. */
export interface DashboardHandle {
  /** Base URL, e.g. `http://127.0.0.1:7070/` (without the token). */
  readonly url: string;
  /** The access token requests must carry, `null` with `noToken`. */
  readonly token: string | null;
  /** The URL to open in a browser: `url` with `?token=` when there is a token. */
  readonly openUrl: string;
  readonly host: string;
  readonly port: number;
  /** Stops the HTTP server, ends the live streams and the watches; the coordinator stays open. */
  close(): Promise<void>;
}

/** Environment variable the CLI reads the token from when `--token` is not given. */
export const DASHBOARD_TOKEN_ENV = 'ZOOTT_DASHBOARD_TOKEN';

/** The port the dashboard listens on by default. */
export const DEFAULT_PORT = 7070;
/** The address the dashboard binds by default: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';
const MIN_TOKEN_LENGTH = 12;

export interface ResolvedOptions {
  coordinator: Coordinator;
  world: string | null;
  port: number;
  host: string;
  readOnly: boolean;
  token: string | null;
  logger: EngineLogger;
  assetsDir: string | undefined;
}

/** True for names and addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const lowered = host.toLowerCase().replace(/^\[|\]$/g, '');
  return lowered === 'localhost' || lowered === '::1' || /^127(\.\d{1,3}){3}$/.test(lowered);
}

const bad = (field: string, why: string) =>
  new ZoottError('INVALID_CONFIG', `${field}: ${why}`, { field });

/** Checks the options and fills in defaults; throws INVALID_CONFIG naming the field. */
export function resolveOptions(options: DashboardOptions): ResolvedOptions {
  if (!options || typeof options !== 'object')
    throw bad('options', 'give an object with a coordinator');
  const coordinator = options.coordinator;
  if (
    !coordinator ||
    typeof coordinator.children !== 'function' ||
    typeof coordinator.onSession !== 'function'
  )
    throw bad('coordinator', 'must be an open Coordinator (connectZk or the memory adapter)');
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw bad('port', `${String(port)} is not an integer in [0, 65535]`);
  const host = options.host ?? DEFAULT_HOST;
  if (typeof host !== 'string' || host.trim() === '')
    throw bad('host', 'must be a non-empty string');
  const token = options.token === undefined || options.token === '' ? null : options.token;
  if (token !== null && (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH))
    throw bad('token', `must be a string of at least ${MIN_TOKEN_LENGTH} characters`);
  if (token !== null && /[\s"'<>&]/.test(token))
    throw bad('token', 'must not contain whitespace, quotes, <, > or &');
  if (options.noToken === true && token !== null)
    throw bad('noToken', 'give a token or ask for none (--no-token), not both');
  if (options.noToken === true && !isLoopback(host))
    throw bad(
      'noToken',
      `--no-token is allowed on a loopback address only: binding to ${host} exposes the dashboard beyond this machine; give a token (--token or ${DASHBOARD_TOKEN_ENV})`,
    );
  if (!isLoopback(host) && token === null)
    throw bad(
      'token',
      `binding to ${host} exposes the dashboard beyond this machine, so an access token is required (--token or ${DASHBOARD_TOKEN_ENV})`,
    );
  const world = options.world === undefined ? null : validateWorldName(options.world);
  return {
    coordinator: coordinator,
    world,
    port,
    host,
    readOnly: options.readOnly === true,
    // 144 random bits, URL-safe: what the printed URL carries.
    token: token ?? (options.noToken === true ? null : randomBytes(18).toString('base64url')),
    logger: options.logger ?? { warn: (fields, msg) => console.warn(msg, fields) },
    assetsDir: options.assetsDir,
  };
}
