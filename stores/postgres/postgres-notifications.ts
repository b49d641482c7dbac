import type { Client, ClientConfig } from 'pg';

type ClientConstructor = new (config: ClientConfig) => Client;

/** Options of `AppendListener`. */
export interface AppendListenerOptions {
  Client: ClientConstructor;
  config: ClientConfig;
  channel: string;
  /** Called with the stream a notification names. */
  onStream(stream: string): void;
  /** Called after (re)connecting, when notifications may have been missed: callers re-read everything they follow. */
  onResync(): void;
}

/**
 * LISTENs for append notifications on a dedicated connection and reconnects (with backoff) when it drops. A
 * notification is only a hint that a stream moved: callers still read from their own position, and poll besides.
 */
export class AppendListener {
  readonly #options: AppendListenerOptions;
  #client: Client | undefined;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  #delayMs = 100;

  constructor(options: AppendListenerOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#client || this.#retry || this.#stopped) return;
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    this.#retry = undefined;
    const client = new this.#options.Client(this.#options.config);
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      void client.end().catch(() => undefined);
      this.#scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel === this.#options.channel && message.payload) this.#options.onStream(message.payload);
    });
    this.#client = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#options.channel}"`);
      if (this.#stopped) return void (await client.end().catch(() => undefined));
      this.#delayMs = 100;
      this.#options.onResync();
    } catch {
      lost();
    }
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#retry) return;
    const delay = this.#delayMs;
    this.#delayMs = Math.min(this.#delayMs * 2, 5_000);
    this.#retry = setTimeout(() => void this.#connect(), delay);
    this.#retry.unref();
  }
}
