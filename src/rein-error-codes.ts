import type { StoreErrorCode } from '../stores/store-errors.js';
import type { HostErrorCode } from './host/host-errors.js';
import type { InspectErrorCode } from './inspect/inspect-errors.js';
import type { McpErrorCode } from './mcp/mcp-errors.js';
import type { MemoryErrorCode } from './memory/memory-errors.js';
import type { PluginErrorCode } from './plugins/plugin-errors.js';
import type { ProjectionErrorCode } from './projections/projection-errors.js';
import type { TelemetryErrorCode } from './telemetry/telemetry-errors.js';
import type { ServeErrorCode } from './serve/serve-errors.js';

/** Every code a `ReinError` can carry, layer by layer (docs/errors.md: *Error codes*). */
export type ReinErrorCode = HostErrorCode | StoreErrorCode | ProjectionErrorCode | InspectErrorCode | TelemetryErrorCode | McpErrorCode | PluginErrorCode | MemoryErrorCode | ServeErrorCode;
