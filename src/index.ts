/** rein's public door: the harness, its sessions, stores, providers, tools, records and errors. */
export { createRein } from './rein.js';
export type { Rein, ReinOptions } from './rein.js';
export { ReinSession } from './session/session-handle.js';
export type { CreateSessionOptions } from './session/start-session.js';
export type { ResumeOptions, ResumeReport } from './session/resume-session.js';
export type { SessionSummary } from './session/session-catalog.js';
export type { ForkOptions as ForkSessionOptions } from './session/fork-session.js';
export type { SessionResult, InputDraft } from './host/session-host.js';
export type { LiveEvent } from './host/live-events.js';
export type { ReplayResult } from './host/replay.js';
export { verifyRecords } from './host/replay.js';
export { ReinError, DivergenceError } from './host/host-errors.js';
export type { HostErrorCode } from './host/host-errors.js';
export { openLevelEventStore, createMemoryEventStore, StoreError, ConcurrencyConflictError, CorruptRecordError } from '../stores/index.js';
export type { EventStore, StreamInfo, ReadOptions, AppendOptions, BlobStore, ArtifactRef, StoreErrorCode } from '../stores/index.js';
export { createScriptedProvider, loadScript, parseScript } from './providers/scripted-provider.js';
export type { ModelProvider } from './providers/provider.js';
export { defineTool } from './tools/tool.js';
export type { ToolDefinition, ToolAnnotations, ToolResult, ToolContext, SideEffectClass, ToolRisk } from './tools/tool.js';
export { builtinTools } from './tools/builtin-tools.js';
export { sessionMachine } from '../machines/session.machine.js';
export { recordTypes, ReinRecordSchema } from '../models/records.js';
export type { ReinRecord, RecordOf, RecordType, RecordClass } from '../models/records.js';
export type { RecordEnvelope } from '../models/envelope.js';
export type { ModelRequest, ModelEvent, ModelMessage, ModelToolDescription } from '../models/model-contract.js';
export type { Script, ScriptTurn } from '../models/script.js';
export type { Budgets } from '../models/budgets.js';
export type { ContextProjected, ContextInclusion, ContextExclusion, ContextCompaction, ContextSource, ContextPhase } from '../models/context.records.js';
export type { VerificationRecorded } from '../models/verification.records.js';
export type { MemoryProposed, MemoryReviewed, MemoryPromoted, MemoryRejected, MemoryRevoked, MemoryExpired } from '../models/memory.records.js';

// Projections: pure reducers, driven live with `scan` and rebuilt with `reduce`.
export { reducerOf, rebuildView, liveView, tailView } from './projections/projection.js';
export type { Projection, ViewState } from './projections/projection.js';
export { ProjectionError, ProjectionGapError } from './projections/projection-errors.js';
export type { ProjectionErrorCode } from './projections/projection-errors.js';
export { contextProjection } from './projections/context.view.js';
export type { ContextView, ActorContext, ContextViewOptions, ConversationItem, TurnItem, UserItem, ToolResultItem, EvidenceItem } from './projections/context.view.js';
export { traceProjection } from './projections/trace.view.js';
export type { TraceView, TraceTurn, TraceAction, TraceVerification } from './projections/trace.view.js';
export { memoryProjection } from './projections/memory.view.js';
export type { MemoryView, MemoryCandidateState, MemoryRecordState } from './projections/memory.view.js';
export { memoryHints } from './projections/memory-hints.js';
export type { MemoryQuery, MemoryHints } from './projections/memory-hints.js';
export { projectModelInput, countInput } from './projections/context-policy.js';
export type { ContextPolicyOptions, PolicyInput, ModelInputProjection } from './projections/context-policy.js';
export { defaultPhaseShares, phaseOf, defaultContextWindow } from './projections/context-budget.js';
export { tokenCounterFor, estimateTokenCounter } from './projections/token-counter.js';
export type { TokenCounter } from './projections/token-counter.js';
export { toArray as listToArray } from './projections/persistent-list.js';
export { valuesOf as mapValues, getIn as mapGet } from './projections/persistent-map.js';

export { rebuildContextView, rebuildTraceView, rebuildMemoryView } from './projections/rebuild.js';

// Trace analysis, reports and eval cases.
export { analyzeTrace } from './trace/trace-analyzer.js';
export { renderTraceMarkdown, renderTraceText } from './trace/trace-report.js';
export { exportEvalCase, checkEvalCase } from './trace/eval-case.js';
export type { EvalCase, EvalAssertion, EvalResult } from './trace/eval-case.js';
export type { TraceReport, TraceFinding, TraceOutcome, FailureCategory, Boundary, FindingType, ReadText } from './trace/trace-types.js';

// Replay modes and the inspector.
export { dryRunSession } from './session/dry-run.js';
export type { DryRunReport, DryRunCall, DecidePermission, PermissionVerdict } from './session/dry-run.js';
export { contextAtTurn } from './session/context-at-turn.js';
export type { ContextAtTurn } from './session/context-at-turn.js';
export { blobText } from './session/session-records.js';
export { defaultVerificationClassifier } from './effects/verification.js';
export type { VerificationClassifier } from './effects/verification.js';
export { connectInspector } from './inspect/stately-inspector.js';
export type { InspectorConnection } from './inspect/stately-inspector.js';
export { startInspectorRelay } from './inspect/inspector-relay.js';
export type { InspectorRelay } from './inspect/inspector-relay.js';
export { inspectRecords } from './inspect/inspect-session.js';
export { InspectError } from './inspect/inspect-errors.js';
export type { InspectErrorCode } from './inspect/inspect-errors.js';
export type { ModelCallSource, ModelCallAttempt, PreparedModelInput } from './effects/call-model.js';
