/*
 * `import('rein')` reads and compiles only what a host needs to start (issue 31: ≤ 2.5× a bare `node -e 0`). The
 * promise-returning exports below whose code nothing else here needs are stand-ins that load their area (a few large
 * chunks of dist/lib: the session runtime, the LevelDB store and store tools, reading sessions back, the worker,
 * telemetry) on their first call; their names, types and behaviour are the originals'.
 */
import { lazyCall, once } from '../util/lazy-call.js';
import type * as Runtime from './runtime.area.js';
import type * as Stores from './stores.area.js';
import type * as History from './history.area.js';
import type * as Worker from './worker.area.js';
import type * as Telemetry from './telemetry.area.js';

const runtimeArea = once(() => import('./runtime.area.js'));
const storesArea = once(() => import('./stores.area.js'));
const historyArea = once(() => import('./history.area.js'));
const workerArea = once(() => import('./worker.area.js'));
const telemetryArea = once(() => import('./telemetry.area.js'));

/** `createRein`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const createRein: typeof Runtime.createRein = lazyCall(runtimeArea, 'createRein');
/** `providerFailureOf`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const providerFailureOf: typeof Runtime.providerFailureOf = lazyCall(runtimeArea, 'providerFailureOf');
/** `forkForRetry`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const forkForRetry: typeof Runtime.forkForRetry = lazyCall(runtimeArea, 'forkForRetry');
/** `openLevelEventStore`; its module (stores.area.ts) loads on the first call (see src/areas). */
export const openLevelEventStore: typeof Stores.openLevelEventStore = lazyCall(storesArea, 'openLevelEventStore');
/** `migratePostgresSchema`; its module (stores.area.ts) loads on the first call (see src/areas). */
export const migratePostgresSchema: typeof Stores.migratePostgresSchema = lazyCall(storesArea, 'migratePostgresSchema');
/** `runWorker`; its module (worker.area.ts) loads on the first call (see src/areas). */
export const runWorker: typeof Worker.runWorker = lazyCall(workerArea, 'runWorker');
/** `copyStore`; its module (stores.area.ts) loads on the first call (see src/areas). */
export const copyStore: typeof Stores.copyStore = lazyCall(storesArea, 'copyStore');
/** `verifyStreamChain`; its module (stores.area.ts) loads on the first call (see src/areas). */
export const verifyStreamChain: typeof Stores.verifyStreamChain = lazyCall(storesArea, 'verifyStreamChain');
/** `createProviderFromSettings`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const createProviderFromSettings: typeof Runtime.createProviderFromSettings = lazyCall(runtimeArea, 'createProviderFromSettings');
/** `resolveMemoryScope`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const resolveMemoryScope: typeof Runtime.resolveMemoryScope = lazyCall(runtimeArea, 'resolveMemoryScope');
/** `analyzeTrace`; its module (history.area.ts) loads on the first call (see src/areas). */
export const analyzeTrace: typeof History.analyzeTrace = lazyCall(historyArea, 'analyzeTrace');
/** `contextAtTurn`; its module (history.area.ts) loads on the first call (see src/areas). */
export const contextAtTurn: typeof History.contextAtTurn = lazyCall(historyArea, 'contextAtTurn');
/** `connectInspector`; its module (history.area.ts) loads on the first call (see src/areas). */
export const connectInspector: typeof History.connectInspector = lazyCall(historyArea, 'connectInspector');
/** `startInspectorRelay`; its module (history.area.ts) loads on the first call (see src/areas). */
export const startInspectorRelay: typeof History.startInspectorRelay = lazyCall(historyArea, 'startInspectorRelay');
/** `createOtlpExporter`; its module (telemetry.area.ts) loads on the first call (see src/areas). */
export const createOtlpExporter: typeof Telemetry.createOtlpExporter = lazyCall(telemetryArea, 'createOtlpExporter');
/** `exportSessionSpans`; its module (telemetry.area.ts) loads on the first call (see src/areas). */
export const exportSessionSpans: typeof Telemetry.exportSessionSpans = lazyCall(telemetryArea, 'exportSessionSpans');
/** `otlpJsonOf`; its module (telemetry.area.ts) loads on the first call (see src/areas). */
export const otlpJsonOf: typeof Telemetry.otlpJsonOf = lazyCall(telemetryArea, 'otlpJsonOf');
/** `exportSessionHtml`; its module (history.area.ts) loads on the first call (see src/areas). */
export const exportSessionHtml: typeof History.exportSessionHtml = lazyCall(historyArea, 'exportSessionHtml');
/** `compareSessions`; its module (history.area.ts) loads on the first call (see src/areas). */
export const compareSessions: typeof History.compareSessions = lazyCall(historyArea, 'compareSessions');
/** `discoverPlugins`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const discoverPlugins: typeof Runtime.discoverPlugins = lazyCall(runtimeArea, 'discoverPlugins');
/** `pluginSpecsOf`; its module (runtime.area.ts) loads on the first call (see src/areas). */
export const pluginSpecsOf: typeof Runtime.pluginSpecsOf = lazyCall(runtimeArea, 'pluginSpecsOf');
/** `diffSession`; its module (history.area.ts) loads on the first call (see src/areas). */
export const diffSession: typeof History.diffSession = lazyCall(historyArea, 'diffSession');
/** `renderSessionDiff`; its module (history.area.ts) loads on the first call (see src/areas). */
export const renderSessionDiff: typeof History.renderSessionDiff = lazyCall(historyArea, 'renderSessionDiff');
/** `rewindSession`; its module (history.area.ts) loads on the first call (see src/areas). */
export const rewindSession: typeof History.rewindSession = lazyCall(historyArea, 'rewindSession');
