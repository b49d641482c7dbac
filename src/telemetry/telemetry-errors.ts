import { ReinError } from '../../models/rein-error.js';

/** Stable codes of telemetry errors; README lists them. */
export type TelemetryErrorCode = 'TELEMETRY_CONFIG_INVALID' | 'TELEMETRY_EXPORT_FAILED';

/**
 * Telemetry was configured wrongly: an OTLP endpoint that is not an http(s) URL, an unsupported protocol
 * (`grpc`), a bad timeout, or an exporter without `export`. Raised before any session runs; a failing collector
 * never raises it (drops are counted instead).
 */
export class TelemetryError extends ReinError<TelemetryErrorCode> {
  constructor(code: TelemetryErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TelemetryError';
  }
}
