/**
 * The frame a connection is reading: room for it in the gateway-wide request
 * budget (request-budget.ts), and the deadline it must arrive whole within.
 *
 * A frame, once begun, must arrive whole within the frame timeout (counted
 * afresh after each pause by the gateway): a client trickling a byte at a time
 * keeps the socket busy but cannot hold its buffer for ever. A frame whose
 * claimed size the budget has no room for waits in the budget's line, and the
 * connection stops reading meanwhile.
 */
import type { FrameSplitter } from '../../protocol/frame-splitter.js';
import type { RequestBudget } from './request-budget.js';

/** What the intake asks of its connection. */
export interface FrameIntakeHost {
  /** Closed, or stopped reading for a protocol violation. */
  stopped(): boolean;
  closed(): boolean;
  /** Reading paused by the gateway (that time is not the client's). */
  paused(): boolean;
  adjustFlow(): void;
  close(reason: string, level: 'warn'): void;
}

export class FrameIntake {
  /** Budget bytes granted to the frame being read (its claimed size). */
  private reservation = 0;
  /** Waiting in the budget's line, for the frame being read or (size 0) for the total to ease. */
  private budgetWait: { bytes: number } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly frames: FrameSplitter,
    private readonly budget: RequestBudget,
    private readonly frameTimeoutMs: number,
    private readonly host: FrameIntakeHost,
  ) {}

  get waitingForBudget(): boolean {
    return this.budgetWait !== null;
  }

  /** After each chunk: a frame still arriving needs room in the budget and runs against the frame deadline. */
  track(): void {
    if (this.host.stopped()) return;
    if (!this.frames.inProgress) return this.stopDeadline();
    const claimed = this.frames.claimedSize;
    if (claimed !== null && this.reservation === 0 && this.budgetWait === null) {
      if (this.budget.request(claimed, this.onBudgetRoom)) this.reservation = claimed;
      else this.budgetWait = { bytes: claimed };
    }
    if (this.budgetWait !== null) {
      // Waiting for room pauses reading, which stops the deadline until reading resumes.
      this.host.adjustFlow();
      return;
    }
    if (!this.host.paused()) this.startDeadline();
  }

  /** Past the budget's cap (whole frames counted as they came): wait in line for the total to ease. */
  waitIfBudgetFull(): void {
    if (this.budgetWait === null && this.budget.heldBytes > this.budget.limit) {
      if (!this.budget.request(0, this.onBudgetRoom)) this.budgetWait = { bytes: 0 };
    }
  }

  /** Starts the deadline for the frame in progress, unless it runs already; each pause by the gateway stops it and a resume starts it afresh. */
  startDeadline(): void {
    if (this.timer !== null || this.frameTimeoutMs <= 0 || !this.frames.inProgress) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const claimed = this.frames.claimedSize;
      const of = claimed === null ? '' : ` of ${claimed + 4}`;
      this.host.close(`a request frame did not arrive whole within ${this.frameTimeoutMs} ms (${this.frames.receivedBytes}${of} bytes came)`, 'warn');
    }, this.frameTimeoutMs);
  }

  stopDeadline(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Budget bytes for a frame that just arrived whole: its reservation, or counted now if it came in one chunk. */
  hold(frame: Buffer): number {
    this.stopDeadline();
    if (this.reservation > 0) {
      const held = this.reservation;
      this.reservation = 0;
      return held;
    }
    this.budget.hold(frame.length);
    return frame.length;
  }

  release(bytes: number): void {
    if (bytes > 0) this.budget.release(bytes);
  }

  /** The connection closed: leave the budget's line and give back what the unfinished frame held. */
  close(): void {
    this.stopDeadline();
    if (this.budgetWait) this.budget.cancel(this.onBudgetRoom);
    this.budgetWait = null;
    if (this.reservation > 0) this.budget.release(this.reservation);
    this.reservation = 0;
  }

  private readonly onBudgetRoom = (): void => {
    const wait = this.budgetWait;
    this.budgetWait = null;
    if (this.host.closed()) {
      if (wait) this.budget.release(wait.bytes);
      return;
    }
    if (wait && wait.bytes > 0) this.reservation = wait.bytes;
    this.host.adjustFlow();
    this.track();
  };
}
