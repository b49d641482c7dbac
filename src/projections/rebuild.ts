import type { RecordEnvelope } from '../../models/envelope.js';
import { contextProjection, type ContextView, type ContextViewOptions } from './context.view.js';
import { memoryProjection, type MemoryView } from './memory.view.js';
import { rebuildView } from './projection.js';
import { traceProjection, type TraceView } from './trace.view.js';

/** The context view of a session rebuilt with `reduce` over its records (equals `session.context$` after them). */
export const rebuildContextView = (records: Iterable<RecordEnvelope>, options?: ContextViewOptions): ContextView => rebuildView(contextProjection(options), records);

/** The trace view rebuilt with `reduce` (equals `session.trace$` after the same records). */
export const rebuildTraceView = (records: Iterable<RecordEnvelope>): TraceView => rebuildView(traceProjection, records);

/** The memory view rebuilt with `reduce` (equals `session.memory$` after the same records). */
export const rebuildMemoryView = (records: Iterable<RecordEnvelope>): MemoryView => rebuildView(memoryProjection, records);
