import type { ActionResult, ActorStates, CompareBody, ContextBody, MachineList, MemoryBody, PendingApproval, ReplayBody, SessionDetail, SessionRow, Timeline, TimelineStep, TraceBody } from '../src/serve/api-schemas.js';

export type { ActionResult, ActorStates, CompareBody, ContextBody, MachineList, MemoryBody, PendingApproval, ReplayBody, SessionDetail, SessionRow, Timeline, TimelineStep, TraceBody };

/** A stored record as the page reads it: the envelope with its data; types the page does not know are shown generically. */
export interface PageRecord {
  stream: string;
  seq: number;
  id: string;
  type: string;
  v: number;
  at: number;
  actor: string;
  cause?: string;
  corr?: string;
  data: Record<string, unknown>;
}

/** What `rein export --html` embeds: one session's data, redacted. */
export interface ExportData {
  exportedAt: number;
  session: SessionDetail;
  timeline: Timeline;
  trace: TraceBody;
  records: PageRecord[];
  contexts: Record<string, ContextBody>;
  machines: MachineList;
}

declare global {
  interface Window {
    __REIN_EXPORT__?: ExportData;
    /** Diagnostics of the live feed (what it received since the page opened), read by the browser tests. */
    reinViewer?: { live: number[]; connects: number };
  }
}
