import type { ModelEvent, ModelRequest } from '../../models/model-contract.js';

/**
 * A model provider turns one `ModelRequest` into a stream of `ModelEvent`s and nothing else: it never runs a tool,
 * never owns the loop, never writes the log. Failures are `error` events, not exceptions.
 */
export interface ModelProvider {
  readonly name: string;
  readonly model?: string;
  /** Where the outputs come from, recorded in `session.created` (a script path, an endpoint URL without secrets). */
  readonly source?: string;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}
