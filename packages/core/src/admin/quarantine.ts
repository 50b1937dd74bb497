import type { Coordinator, Op, Stat } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { codeOf } from '../engine/errors.js';
import { deleteTree } from '../recipes/delete-tree/index.js';

/*
 * The quarantine area keeps what `zoott doctor --repair` moves: one `item-<seq>` node per
 * moved node, holding where it came from, why, and its bytes exactly as they were. Bytes
 * that are UTF-8 text are kept as text (`data`), any others in base64 (`base64`); a node
 * whose copy does not fit one node beside the record (the largest nodes ZooKeeper holds)
 * keeps its bytes raw in the item's children `part-0000`, `part-0001`, ...
 */

/** What a quarantine item's node holds. */
export interface QuarantineRecord {
  /** The path the node was moved from. */
  from: string;
  kind: string;
  detail: string;
  movedAt: number;
  /** The session that owned it, when it was ephemeral (`null` otherwise). */
  ephemeralOwner: string | null;
  /** Length of its data, in bytes (absent in items of zoott 0.1.0, which kept text only). */
  bytes: number;
  /** Its data, when those bytes are UTF-8 text. */
  data?: string;
  /** Its data in base64, when they are not. */
  base64?: string;
  /** Its data in this many raw `part-NNNN` children, when it did not fit the record. */
  parts?: number;
  /** Set while the parts are written, cleared by the move: a move that never finished. */
  copying?: true;
}

/** Raw bytes per `part-NNNN` child: well under the node size limit. */
export const PART_BYTES = 256 * 1024;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are UTF-8 (so the text encodes back to the same bytes). */
function asText(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The record of a node moved with its data inline: as text when it is, else base64. */
export function inlineRecord(
  base: Omit<QuarantineRecord, 'bytes' | 'data' | 'base64' | 'parts'>,
  data: Uint8Array,
): QuarantineRecord {
  const text = asText(data);
  return text !== null
    ? { ...base, bytes: data.length, data: text }
    : { ...base, bytes: data.length, base64: toBase64(data) };
}

/** Base64 of any bytes (the platform's `btoa`, fed in slices to keep its arguments small). */
function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fromBase64(b64: string): Uint8Array {
  const text = atob(b64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const partName = (i: number) => `part-${String(i).padStart(4, '0')}`;

/**
 * Moves one node into the quarantine folder `dir`: ONE multi creates the item (its record
 * with the data inline), runs `guard` (checks of what the move rests on) and deletes the node
 * at `stat.version`. Returns the item's path. A record too large for one request is written
 * in steps instead: the item (marked `copying`) and its raw parts first, then ONE multi that
 * sets the item's final record, runs `guard` and deletes the node; a failed multi removes
 * the parts again. Either way the node is deleted only in the multi that keeps its copy.
 */
export async function moveToQuarantine(
  coordinator: Coordinator,
  dir: string,
  from: string,
  got: { data: Uint8Array; stat: Stat },
  meta: Omit<QuarantineRecord, 'from' | 'bytes' | 'ephemeralOwner'>,
  guard: readonly Op[],
): Promise<string> {
  const base = { from, ...meta, ephemeralOwner: got.stat.ephemeralOwner };
  const remove: Op = { op: 'delete', path: from, version: got.stat.version };
  try {
    const results = await coordinator.multi([
      {
        op: 'create',
        path: `${dir}/item-`,
        data: encodeJson(inlineRecord(base, got.data)),
        sequential: true,
      },
      // Before the delete: the guard may check the node itself (an entry of its task).
      ...guard,
      remove,
    ]);
    const created = results[0];
    return created?.op === 'create' ? created.path : dir;
  } catch (err) {
    // Refused before it was sent (nothing was written): the copy goes in parts.
    if (codeOf(err) !== 'DATA_TOO_LARGE') throw err;
  }
  const parts = Math.ceil(got.data.length / PART_BYTES);
  const record: QuarantineRecord = { ...base, bytes: got.data.length, parts };
  const item = await coordinator.create(`${dir}/item-`, encodeJson({ ...record, copying: true }), {
    sequential: true,
  });
  try {
    for (let i = 0; i < parts; i++)
      await coordinator.create(
        `${item}/${partName(i)}`,
        got.data.subarray(i * PART_BYTES, (i + 1) * PART_BYTES),
      );
    await coordinator.multi([
      { op: 'set', path: item, data: encodeJson(record), version: 0 },
      ...guard,
      remove,
    ]);
    return item;
  } catch (err) {
    await deleteTree(coordinator, item).catch(() => undefined);
    throw err;
  }
}

/**
 * A quarantine item: its record and the moved node's bytes, exactly as they were.
 *
 * @throws ZoottError BAD_ARGUMENTS when it is not a quarantine item, or its move never
 * finished (`copying`: the node it copies was not moved).
 */
export async function readQuarantined(
  coordinator: Coordinator,
  item: string,
): Promise<{ record: QuarantineRecord; bytes: Uint8Array }> {
  const record = decodeJson<QuarantineRecord>((await coordinator.get(item)).data, item);
  const bad = (why: string) => new ZoottError('BAD_ARGUMENTS', `${item}: ${why}`, { path: item });
  if (typeof record?.from !== 'string') throw bad('not a quarantine item');
  if (record.copying) throw bad(`a move of ${record.from} that never finished (it was not moved)`);
  let bytes: Uint8Array;
  if (typeof record.data === 'string') bytes = new TextEncoder().encode(record.data);
  else if (typeof record.base64 === 'string') bytes = fromBase64(record.base64);
  else if (typeof record.parts === 'number') {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < record.parts; i++)
      chunks.push((await coordinator.get(`${item}/${partName(i)}`)).data);
    bytes = concat(chunks);
  } else bytes = new Uint8Array();
  // Items of zoott 0.1.0 kept the data as text only, without `bytes` (bytes that were not
  // UTF-8 were lost on the way in).
  if (typeof record.bytes === 'number' && bytes.length !== record.bytes)
    throw bad(`holds ${bytes.length} bytes of the ${record.bytes} it says it kept`);
  return { record, bytes };
}
