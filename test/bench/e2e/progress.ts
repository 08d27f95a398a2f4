/**
 * What the run is doing: on a terminal one line per phase, rewritten in place
 * as figures arrive; otherwise (CI, a pipe) one plain line when a phase
 * starts and one when it ends.
 */
export class Progress {
  private readonly tty = process.stdout.isTTY === true;
  private phase = '';
  private startedAt = 0;
  private lastPlain = 0;

  constructor(private readonly total: number) {}
  private index = 0;

  start(phase: string): void {
    this.index++;
    this.phase = `[${this.index}/${this.total}] ${phase}`;
    this.startedAt = performance.now();
    if (this.tty) this.draw('');
    else process.stdout.write(`${this.phase} ...\n`);
  }

  /** A running figure for the current phase. */
  update(detail: string): void {
    if (this.tty) this.draw(detail);
    else if (performance.now() - this.lastPlain > 5_000) {
      this.lastPlain = performance.now();
      process.stdout.write(`${this.phase} ${this.elapsed()} ${detail}\n`);
    }
  }

  end(summary: string): void {
    if (this.tty) process.stdout.write(`\r\x1b[2K${this.phase} ${this.elapsed()} ${summary}\n`);
    else process.stdout.write(`${this.phase} done in ${this.elapsed()}: ${summary}\n`);
  }

  note(line: string): void {
    if (this.tty) process.stdout.write('\r\x1b[2K');
    process.stdout.write(line + '\n');
  }

  private elapsed(): string {
    return `${((performance.now() - this.startedAt) / 1000).toFixed(1)}s`;
  }

  private draw(detail: string): void {
    const line = `${this.phase} ${this.elapsed()} ${detail}`;
    const width = process.stdout.columns ?? 120;
    process.stdout.write(`\r\x1b[2K${line.slice(0, width - 1)}`);
  }
}
