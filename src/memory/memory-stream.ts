/**
 * The workspace's governance stream: one stream in the event store holding every governance decision and the
 * store records (its own LevelDB database, like every stream). Session ids may not take this name.
 */
export const memoryStream = 'memory';

/** True for stream names sessions may not use (the governance stream). */
export const isReservedStreamName = (name: string): boolean => name === memoryStream;
