import { SessionMemory } from '../memory/session-memory.js';
import { readSessionRecords } from './read-session.js';
import type { SessionServices } from './session-services.js';

/** The memory of one session of this harness (undefined when the harness runs without memory). */
export const sessionMemoryFor = (services: SessionServices, sessionId: string): SessionMemory | undefined =>
  services.memory
    ? new SessionMemory({ sessionId, services: services.memory, clock: services.clock, readRecords: () => readSessionRecords(services.store, sessionId) })
    : undefined;
