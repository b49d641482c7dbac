import type { ActionResult, ActorStates, CompareBody, ContextBody, ExportData, MachineList, MemoryBody, PageRecord, ReplayBody, SessionDetail, SessionRow, Timeline, TraceBody } from './types.js';
import { transitionsOf } from '../src/host/step-record.js';

/** An answer the server refused: its stable code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Where the page's data comes from: the server's API, or the data an exported file carries. */
export interface Source {
  readonly live: boolean;
  sessions(filter: { status?: string; q?: string }): Promise<{ sessions: SessionRow[]; actions: boolean }>;
  session(id: string): Promise<SessionDetail>;
  timeline(id: string, offset?: number): Promise<Timeline>;
  trace(id: string): Promise<TraceBody>;
  records(id: string, from: number, to: number): Promise<{ head: number; records: PageRecord[] }>;
  context(id: string, actor: string, turn: number): Promise<ContextBody>;
  states(id: string, seq: number): Promise<ActorStates>;
  memory(id: string): Promise<MemoryBody>;
  machines(): Promise<MachineList>;
  blob(id: string, ref: string): Promise<string>;
  compare(a: string, b: string): Promise<CompareBody>;
  act(path: string, body?: unknown): Promise<ActionResult & Partial<ReplayBody>>;
}

const json = async <T>(response: Response): Promise<T> => {
  if (response.ok) return (await response.json()) as T;
  let code = 'HTTP_' + String(response.status);
  let message = response.statusText;
  try {
    const body = (await response.json()) as { error?: { code: string; message: string } };
    if (body.error) ({ code, message } = body.error);
  } catch {
    // not JSON: keep the status
  }
  throw new ApiError(response.status, code, message);
};

const get = <T>(path: string): Promise<T> => fetch(path, { credentials: 'same-origin' }).then((response) => json<T>(response));
const q = (value: string) => encodeURIComponent(value);

/** The server's API (the page's cookie carries the token). */
export const httpSource = (): Source => ({
  live: true,
  sessions: ({ status, q: text }) => get<{ sessions: SessionRow[]; actions: boolean }>(`/api/sessions?${new URLSearchParams({ ...(status ? { status } : {}), ...(text ? { q: text } : {}) }).toString()}`),
  session: (id) => get(`/api/sessions/${q(id)}`),
  timeline: (id, offset = 0) => get(`/api/sessions/${q(id)}/timeline?offset=${offset}`),
  trace: (id) => get(`/api/sessions/${q(id)}/trace`),
  records: (id, from, to) => get(`/api/sessions/${q(id)}/records?from=${from}&to=${Math.max(from, to)}&limit=${Math.min(5000, Math.max(1, to - from + 1))}`),
  context: (id, actor, turn) => get(`/api/sessions/${q(id)}/context?actor=${q(actor)}&turn=${turn}`),
  states: (id, seq) => get(`/api/sessions/${q(id)}/states?seq=${seq}`),
  memory: (id) => get(`/api/sessions/${q(id)}/memory`),
  machines: () => get('/api/machines'),
  blob: (id, ref) => fetch(`/api/sessions/${q(id)}/blob?ref=${q(ref)}`, { credentials: 'same-origin' }).then(async (response) => (response.ok ? response.text() : json<string>(response))),
  compare: (a, b) => get(`/api/compare?a=${q(a)}&b=${q(b)}`),
  act: (path, body = {}) => fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((response) => json(response)),
});

const offline = () => Promise.reject(new ApiError(0, 'EXPORT_OFFLINE', 'an exported file has no server: this is not available offline'));

/** The data an exported file carries (everything the page shows of that session; no action). */
export const staticSource = (data: ExportData): Source => {
  const records = data.records;
  return {
    live: false,
    sessions: async () => ({ sessions: [data.session], actions: false }),
    session: async () => data.session,
    timeline: async (_id, offset = 0) => ({ ...data.timeline, offset, steps: data.timeline.steps.slice(offset) }),
    trace: async () => data.trace,
    records: async (_id, from, to) => ({ head: records.length, records: records.filter((record) => record.seq >= from && record.seq <= to) }),
    context: async (_id, actor, turn) => {
      const found = data.contexts[`${actor}#${turn}`];
      if (!found) throw new ApiError(404, 'CONTEXT_NOT_RECORDED', `the export has no model input of ${actor} turn ${turn}`);
      return found;
    },
    states: async (_id, seq) => {
      const actors: ActorStates['actors'] = {};
      for (let index = Math.min(seq, records.length) - 1; index >= 0; index--) {
        const moves = transitionsOf(records[index]!);
        for (let move = moves.length - 1; move >= 0; move--) {
          const { actor, to } = moves[move]!;
          if (!(actor in actors)) actors[actor] = to as ActorStates['actors'][string];
        }
      }
      return { seq, actors };
    },
    memory: async () => ({ candidates: [], records: [], orphans: 0 }),
    machines: async () => data.machines,
    blob: offline,
    compare: offline,
    act: offline,
  };
};
