import type { Acl } from '../../contract/acl.js';
import { ZoottError } from '../../contract/errors.js';
import { joinPath, validatePath } from '../../contract/paths.js';
import { type AclSpec, makeDigestAcl } from '../acl/acl-lists.js';
import { defaultNodeId } from '../lock-id/lock-id.js';
import { readAcl, readAuth, readString, type ZkAuth } from './conf-values.js';

/** The settings zkutil's ZKConf carries. */
export interface ZkConfValues {
  /** Comma-separated `host:port` list, optionally with a chroot: `10.0.0.1:2181,10.0.0.2:2181/app`. */
  hosts: string;
  /** Base dir of transaction journals (zkutil's `journal_dir`). */
  journalDir: string;
  /** Base dir of transaction records (zkutil's `record_dir`). */
  recordDir: string;
  /** Base dir of `Lock` nodes (zkutil's `lock_dir`). */
  lockDir: string;
  /** Identifies this host in lock ids; different hosts must use different ids. */
  nodeId: string;
  /** Credentials added to connections the recipes open, or `null`. */
  auth: ZkAuth | null;
  /** ACL of nodes the recipes create (locks), as digest specs, or `null` for the default ACL. */
  acl: AclSpec[] | null;
}

/**
 * Explicit settings; a missing or `null` field falls back to env, file, then default. The
 * fields named in two words take zkutil's spelling too (`node_id`, `lock_dir`, ...), so its
 * `zkconf=dict(...)` reads as written; a key that is neither is refused.
 */
export type ZkConfInit = {
  [K in keyof ZkConfValues]?: ZkConfValues[K] | (K extends 'auth' | 'acl' ? string : never) | null;
} & {
  journal_dir?: string | null;
  record_dir?: string | null;
  lock_dir?: string | null;
  node_id?: string | null;
};

/** Where fallback values come from. Core never reads them itself: the CLI/worker pass them in. */
export interface ZkConfSources {
  /** Environment, usually `process.env`; see `ZK_CONF_ENV` for the variable names. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A parsed config file: an object with the fields in camelCase or snake_case. */
  file?: unknown;
  /** The file's name, for error messages. */
  fileName?: string;
}

/** Defaults when nothing else sets a field (zkutil's); `nodeId` defaults to `defaultNodeId()`. */
export const ZK_CONF_DEFAULTS: Readonly<Omit<ZkConfValues, 'nodeId'>> = Object.freeze({
  hosts: '127.0.0.1:2181',
  journalDir: 'journal/',
  recordDir: 'record/',
  lockDir: 'lock/',
  auth: null,
  acl: null,
});

/** Environment variables read for each field. `auth` is `scheme:user:password`, `acl` is `user:password:perms,...`. */
export const ZK_CONF_ENV: Readonly<Record<keyof ZkConfValues, string>> = Object.freeze({
  hosts: 'ZOOTT_ZK_HOSTS',
  journalDir: 'ZOOTT_ZK_JOURNAL_DIR',
  recordDir: 'ZOOTT_ZK_RECORD_DIR',
  lockDir: 'ZOOTT_ZK_LOCK_DIR',
  nodeId: 'ZOOTT_ZK_NODE_ID',
  auth: 'ZOOTT_ZK_AUTH',
  acl: 'ZOOTT_ZK_ACL',
});

const FIELDS = Object.keys(ZK_CONF_ENV) as Array<keyof ZkConfValues>;
const SNAKE: Readonly<Record<keyof ZkConfValues, string>> = {
  hosts: 'hosts',
  journalDir: 'journal_dir',
  recordDir: 'record_dir',
  lockDir: 'lock_dir',
  nodeId: 'node_id',
  auth: 'auth',
  acl: 'acl',
};

/** Where a field's value came from. */
export type ZkConfOrigin = 'explicit' | 'env' | 'file' | 'default';

function readField(field: keyof ZkConfValues, value: unknown, where: string): unknown {
  if (field === 'auth') return readAuth(value, where);
  if (field === 'acl') return readAcl(value, where);
  return readString(value, where);
}

/**
 * The fields of an object of settings (a config file's, or the explicit ones), in either
 * spelling; an unknown key, or one field in both spellings, is INVALID_CONFIG.
 */
function namedFields(fields: unknown, where: string): Partial<Record<keyof ZkConfValues, unknown>> {
  if (fields === undefined || fields === null) return {};
  if (typeof fields !== 'object' || Array.isArray(fields)) {
    throw new ZoottError('INVALID_CONFIG', `${where}: the config must be an object of fields`);
  }
  const out: Partial<Record<keyof ZkConfValues, unknown>> = {};
  const seen = new Map<keyof ZkConfValues, string>();
  for (const [key, value] of Object.entries(fields)) {
    const field = FIELDS.find((f) => f === key || SNAKE[f] === key);
    if (!field) {
      throw new ZoottError(
        'INVALID_CONFIG',
        `${where}: unknown field ${JSON.stringify(key)} (known: ${FIELDS.map((f) => SNAKE[f]).join(', ')}, or their camelCase names)`,
        { field: key },
      );
    }
    const other = seen.get(field);
    if (other !== undefined)
      throw new ZoottError(
        'INVALID_CONFIG',
        `${where}: ${other} and ${key} are one field; give one of them`,
        { field: key },
      );
    seen.set(field, key);
    if (value !== undefined && value !== null) out[field] = value;
  }
  return out;
}

/**
 * zkutil's ZKConf: ZooKeeper settings with fallback. Each field is taken from the explicit
 * value, else the environment, else the config file, else the default (`ZK_CONF_DEFAULTS`).
 * Everything is checked when the object is built, so a bad value fails early with an
 * INVALID_CONFIG error naming the field and where it came from.
 *
 * Paths built from the dirs are absolute: zkutil's relative `lock/` resolves against the root
 * (as kazoo does), so `new ZkConf().lock('foo')` is `/lock/foo`.
 */
export class ZkConf {
  private readonly values: ZkConfValues;
  private readonly origins: Record<keyof ZkConfValues, ZkConfOrigin>;

  constructor(init: ZkConfInit = {}, sources: ZkConfSources = {}) {
    const fileName = sources.fileName ?? 'config file';
    const fromFile = namedFields(sources.file, fileName);
    const given = namedFields(init, 'ZkConf');
    const values: Partial<Record<keyof ZkConfValues, unknown>> = {};
    const origins: Partial<Record<keyof ZkConfValues, ZkConfOrigin>> = {};
    for (const field of FIELDS) {
      const explicit = given[field];
      const env = sources.env?.[ZK_CONF_ENV[field]];
      const file = fromFile[field];
      if (explicit !== undefined && explicit !== null) {
        values[field] = readField(field, explicit, field);
        origins[field] = 'explicit';
      } else if (env !== undefined && env !== '') {
        values[field] = readField(field, env, ZK_CONF_ENV[field]);
        origins[field] = 'env';
      } else if (file !== undefined) {
        values[field] = readField(field, file, `${fileName}: ${SNAKE[field]}`);
        origins[field] = 'file';
      } else {
        values[field] = field === 'nodeId' ? defaultNodeId() : ZK_CONF_DEFAULTS[field];
        origins[field] = 'default';
      }
    }
    this.values = values as ZkConfValues;
    this.origins = origins as Record<keyof ZkConfValues, ZkConfOrigin>;
  }

  /** A ZkConf from a ZkConf (returned as is), explicit settings, or a hosts string. */
  static from(source: ZkConf | ZkConfInit | string, sources?: ZkConfSources): ZkConf {
    if (source instanceof ZkConf) return source;
    if (typeof source === 'string') return new ZkConf({ hosts: source }, sources);
    return new ZkConf(source, sources);
  }

  hosts(): string {
    return this.values.hosts;
  }
  journalDir(): string {
    return this.values.journalDir;
  }
  recordDir(): string {
    return this.values.recordDir;
  }
  lockDir(): string {
    return this.values.lockDir;
  }
  nodeId(): string {
    return this.values.nodeId;
  }
  auth(): ZkAuth | null {
    return this.values.auth;
  }
  acl(): AclSpec[] | null {
    return this.values.acl;
  }

  /** Where a field's value came from. */
  origin(field: keyof ZkConfValues): ZkConfOrigin {
    return this.origins[field];
  }

  /**
   * Path of the lock node for `key` (zkutil's `lock(key)`): `<lockDir>/<key>`, absolute. A
   * numeric key (a txid) is zero-padded to 10 digits as zkutil does.
   */
  lock(key: string | number = ''): string {
    return this.under(this.values.lockDir, key);
  }

  /** Path of a record node: `<recordDir>/<key>`, absolute. */
  record(key: string | number = ''): string {
    return this.under(this.values.recordDir, key);
  }

  /** Path under the journal dir: `<journalDir>/<key>`, absolute. */
  journal(key: string | number = ''): string {
    return this.under(this.values.journalDir, key);
  }

  /** The configured ACL as contract entries (zkutil's `kazoo_digest_acl`), or `null`. */
  digestAcl(): Acl[] | null {
    return makeDigestAcl(this.values.acl);
  }

  /** Arguments for `Coordinator.addAuth` (zkutil's `kazoo_auth`), or `null`. */
  authArgs(): [scheme: string, credentials: string] | null {
    const auth = this.values.auth;
    return auth ? [auth[0], `${auth[1]}:${auth[2]}`] : null;
  }

  /** The resolved settings, e.g. for `zoott config show` (mask `auth`/`acl` before printing). */
  toJSON(): ZkConfValues {
    return { ...this.values };
  }

  private under(dir: string, key: string | number): string {
    const name = typeof key === 'number' ? String(key).padStart(10, '0') : key;
    const path = joinPath(dir, name);
    validatePath(path);
    return path;
  }
}
