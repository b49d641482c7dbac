/** The store layer's public surface: the EventStore contract, its two backends, the record codec and the errors. */
export type {
  AppendOptions,
  EventStore,
  AppendFence,
  ForkOptions,
  PositionedRecord,
  ReadAllOptions,
  ReadOptions,
  StoreCapabilities,
  StoredSnapshot,
  StreamInfo,
  StreamPageOptions,
} from './event-store.js';
export type { ArtifactRef, BlobStore } from './blob-store.js';
export {
  BlobError,
  ChainError,
  CodecMismatchError,
  ConcurrencyConflictError,
  CorruptRecordError,
  StoreError,
  StreamLockedError,
} from './store-errors.js';
export type { StoreErrorCode } from './store-errors.js';
export {
  RECORD_CODEC_DESCRIPTOR,
  RECORD_CODEC_ID,
  RECORD_CODEC_OPTIONS,
  RECORD_FORMAT_BYTE,
  decodeValue,
  encodeValue,
} from './record-codec.js';
export type { PinnedCodecOptions, ValueLocation } from './record-codec.js';
export { MemoryEventStore, MemoryStorage, createMemoryEventStore } from './memory-event-store.js';
export type { MemoryEventStoreOptions } from './memory-event-store.js';
export { LevelEventStore, openLevelEventStore } from './level-event-store.js';
export type { LevelEventStoreOptions } from './level-event-store.js';
export { MemoryBlobStore } from './memory-blob-store.js';
export { FileBlobStore } from './file-blob-store.js';
export type { FileBlobStoreOptions } from './file-blob-store.js';
export { createUpcaster, upcastRecords, upcastSteps, UnsupportedVersionError } from './upcasters.js';
export { createCallSpecResolver, resolveCallSpecs } from './call-spec-refs.js';
export { ChainKey, randomChainKey, loadChainHashing } from './chain-crypto.js';
export { chainKeyPath, loadChainKey } from './chain-key-file.js';
export type { LoadChainKeyOptions } from './chain-key-file.js';
export type { ChainReport, ChainStatus } from './chain-check.js';
export type { UpcastStep } from './upcasters.js';
export { PostgresEventStore, openPostgresEventStore } from './postgres/postgres-event-store.js';
export type { PostgresEventStoreOptions } from './postgres/postgres-event-store.js';
export { FencedError } from './postgres/postgres-errors.js';
export { isPostgresUrl, parsePostgresUrl, redactPostgresUrl } from './postgres/postgres-url.js';
export type { PostgresLocation } from './postgres/postgres-url.js';
export { migratePostgresSchema } from './postgres/postgres-migrate.js';
export type { MigrationReport } from './postgres/postgres-migrate.js';
