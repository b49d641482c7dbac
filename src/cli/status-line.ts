const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * One animated line at the cursor (`⠋ thinking · 2.3 s`), redrawn in place while something runs. Only on a TTY:
 * elsewhere every call is a no-op, so logs and pipes never see control sequences. `clear` must be called before
 * anything else is written to the same stream.
 */
export class StatusLine {
  private label: string | undefined;
  private since = 0;
  private frame = 0;
  private shown = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly enabled: boolean,
    private readonly dim: (text: string) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Show (or relabel) the line; the elapsed time restarts only when `restart` is true. */
  show(label: string, restart = true): void {
    if (!this.enabled) return;
    if (restart || this.label === undefined) this.since = this.now();
    this.label = label;
    this.draw();
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    }
  }

  /** Erase the line (if drawn) and stop animating until the next `show`. */
  clear(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.label = undefined;
    if (this.shown) this.out.write('\r\u001b[2K');
    this.shown = false;
  }

  get active(): boolean {
    return this.label !== undefined;
  }

  private draw(): void {
    if (this.label === undefined) return;
    this.frame = (this.frame + 1) % frames.length;
    const seconds = ((this.now() - this.since) / 1000).toFixed(1);
    this.out.write(`\r\u001b[2K${this.dim(`${frames[this.frame]} ${this.label} · ${seconds} s`)}`);
    this.shown = true;
  }
}
