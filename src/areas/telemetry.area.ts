/* OpenTelemetry export of a session's spans, loaded by the first call (src/index.ts). */
export { createOtlpExporter, exportSessionSpans, otlpJsonOf } from '../telemetry/telemetry.js';
