import type {
  AreaCounts,
  EngineEvent,
  ListedTask,
  PauseState,
  TaskKey,
  TaskProgress,
  TaskRecord,
  TreeNode,
} from '@zoott/core';
import type { FailedList, RetryAllResult, WorkerView } from '../server/data.js';
import type { ThroughputSlot } from '../server/live.js';
import type { LimitRow, ScheduleData } from '../server/schedules.js';
import { encodeKey } from './task-states.js';

export type {
  AreaCounts,
  EngineEvent,
  FailedList,
  LimitRow,
  ListedTask,
  PauseState,
  RetryAllResult,
  ScheduleData,
  TaskKey,
  TaskProgress,
  TaskRecord,
  TreeNode,
  WorkerView,
};

export interface Config {
  readOnly: boolean;
  world: string | null;
  worlds: string[];
  zookeeper: string;
}

export interface Overview {
  world: string;
  worlds: string[];
  counts: AreaCounts;
  oldestPending: { key: TaskKey; since: number; ageMs: number } | null;
  workers: number;
  /** What is paused in the world (workers claim none of it). */
  paused: PauseState;
  throughput: { slotMs: number; slots: ThroughputSlot[] };
  zookeeper: string;
  now: number;
}

/** An API error with the server's code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';
}

/** The access token the server echoed into the page (empty without one). */
export const token = meta('zoott-token');
export const pageReadOnly = meta('zoott-read-only') === 'true';
export const pageWorld = meta('zoott-world');

export { encodeKey };

/** A URL of this server, with the token for the one place headers cannot go (EventSource). */
export function apiUrl(path: string, params: Record<string, string> = {}, withToken = false) {
  const query = new URLSearchParams(params);
  if (withToken && token) query.set('token', token);
  const queryText = query.toString();
  return queryText ? `${path}?${queryText}` : path;
}

async function call<T>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    cache: 'no-store',
  });
  const text = await res.text();
  const value = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const error = value?.error ?? {};
    throw new ApiError(res.status, error.code ?? 'HTTP', error.message ?? `HTTP ${res.status}`);
  }
  return value as T;
}

export const api = {
  config: () => call<Config>('GET', apiUrl('/api/config')),
  overview: (world: string) => call<Overview>('GET', apiUrl('/api/overview', { world })),
  counts: (world: string) => call<AreaCounts>('GET', apiUrl('/api/counts', { world })),
  tree: (world: string, root?: string) =>
    call<TreeNode[]>('GET', apiUrl('/api/tree', root ? { world, root } : { world })),
  task: (world: string, key: TaskKey) =>
    call<TaskRecord & { report: TaskProgress | null }>(
      'GET',
      apiUrl('/api/task', { world, key: encodeKey(key) }),
    ),
  failed: (world: string) => call<FailedList>('GET', apiUrl('/api/failed', { world })),
  workers: (world: string) => call<WorkerView[]>('GET', apiUrl('/api/workers', { world })),
  schedules: (world: string) => call<ScheduleData>('GET', apiUrl('/api/schedules', { world })),
  retry: (world: string, key: TaskKey) => call<unknown>('POST', '/api/retry', { world, key }),
  retryAll: (world: string) =>
    call<RetryAllResult & { ok: true }>('POST', '/api/retry-all', { world }),
  cancel: (world: string, key: TaskKey, subtree = false) =>
    call<unknown>('POST', '/api/cancel', { world, key, subtree }),
  pause: (world: string, type?: string) =>
    call<{ paused: PauseState }>('POST', '/api/pause', type ? { world, type } : { world }),
  resume: (world: string, type?: string) =>
    call<{ paused: PauseState }>('POST', '/api/resume', type ? { world, type } : { world }),
};
