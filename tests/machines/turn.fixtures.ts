// The turn fixtures are rein/testing's own helpers (a host's tests use the same ones), under the names these tests use.
export { sampleCallSpec as baseCallSpec, sampleTurnInput as turnInput } from '../../src/testing/turn-input.js';
