import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The trial's damage to a stream: 40 bytes XORed at byte 20,000 of its LevelDB write-ahead log (which must be longer
 * than 40,000 bytes, so the damage sits between records). Resolves the log's file name.
 */
export const damageStreamLog = async (streamDirectory: string): Promise<string> => {
  const log = (await readdir(streamDirectory)).find((name) => name.endsWith('.log'));
  if (log === undefined) throw new Error(`no write-ahead log in ${streamDirectory}`);
  const size = (await stat(join(streamDirectory, log))).size;
  if (size <= 40_000) throw new Error(`the log ${log} holds ${size} bytes, too few to damage in its middle`);
  const file = await open(join(streamDirectory, log), 'r+');
  try {
    const bytes = Buffer.alloc(40);
    await file.read(bytes, 0, 40, 20_000);
    for (let index = 0; index < bytes.length; index++) bytes[index]! ^= 0xff;
    await file.write(bytes, 0, 40, 20_000);
  } finally {
    await file.close();
  }
  return log;
};

/**
 * The trial's tampering with a stream blob: the blob `hex` (stored whole or as a delta) is replaced by a whole blob
 * whose bytes are its own with one character changed — the key still says `hex`, the content no longer hashes to it.
 * `original` is the blob's real content (read before, through the store). The stream's database must be closed.
 */
export const tamperStreamBlob = async (streamDirectory: string, hex: string, original: Uint8Array): Promise<void> => {
  const { ClassicLevel } = await import('classic-level');
  const database = new ClassicLevel<string, Uint8Array>(streamDirectory, { valueEncoding: 'view', createIfMissing: false });
  await database.open();
  try {
    const altered = Buffer.from(original);
    const at = Math.floor(altered.length / 2);
    altered[at] = altered[at] === 0x41 ? 0x42 : 0x41;
    await database.batch([
      { type: 'del', key: `d!${hex}` },
      { type: 'put', key: `b!${hex}`, value: altered },
    ]);
  } finally {
    await database.close();
  }
};
