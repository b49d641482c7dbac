/**
 * `rein/testing`: helpers for testing agents and statecharts — model-check any machine (breadth-first over its pure
 * transitions, as `xstate/graph` walks it), drive sessions with a scripted model on an in-memory store, and verify
 * logs by replay.
 */
export { checkMachine } from './model-check.js';
export type { ModelCheckOptions, ModelCheckResult, ModelStep, ModelViolation } from './model-check.js';
export { runScriptedSession } from './run-scripted.js';
export { formatFixture, parseFixture, readLogFixture, refsIn, sequentialIds, writeLogFixture } from './log-fixture.js';
export type { LogFixture } from './log-fixture.js';
export { sampleCallSpec, sampleTurnInput } from './turn-input.js';
export { assertRecordsMatchSchemas, assertReplayProperty } from './replay-property.js';
export type { ReplayPropertyOptions } from './replay-property.js';
export type { ScriptedRun, ScriptedRunOptions } from './run-scripted.js';
export type { Script, ScriptInput, ScriptTurn, ScriptTurnInput } from '../../models/script.js';
export { createMemoryEventStore } from '../../stores/memory-event-store.js';
export { createScriptedProvider, loadScript, parseScript } from '../providers/scripted-provider.js';
export { createRecordedProvider, loadRecordedProvider, recordedOutputsOf } from '../providers/recorded.provider.js';
export { verifyRecords } from '../host/replay.js';
export { entriesOf, flattenRecords, upcastLegacySteps } from '../host/step-record.js';
export type { ReplayResult } from '../host/replay.js';
export { canonicalEqual } from '../host/canonical-equal.js';
export { rebuildView, liveView, reducerOf } from '../projections/projection.js';
export { checkEvalCase, exportEvalCase } from '../trace/eval-case.js';
export { analyzeTrace } from '../areas/lazy-exports.js';
export { startPostgresCluster, findPostgresBinaries } from './postgres-cluster.js';
export type { PostgresCluster, PostgresClusterOptions } from './postgres-cluster.js';
export { AnthropicPromptCache, OpenAIPromptCache, anthropicPromptBlocks, openAIPromptBlocks, promptBytes, sharedPrefixBytes } from './prompt-cache.js';
export type { CacheUsage, PromptBlock } from './prompt-cache.js';
