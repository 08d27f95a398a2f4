/**
 * Responses in request order. Clients pipeline, and Kafka promises responses
 * in request order per connection, so each request takes a slot when it
 * arrives and a response waits in its slot until every earlier one has gone
 * out: a slow Fetch holds back the Produce answers behind it, never the other
 * way round. Produce with acks=0 fills its slot with nothing.
 */
import type { Socket } from 'node:net';

export interface Slot {
  correlationId: number;
  /** Request bytes counted against the gateway's budget until the handler is done. */
  heldBytes: number;
  /** undefined while the handler runs; null when Kafka sends no response. */
  response: Buffer[] | null | undefined;
}

export class ResponseOrder {
  private readonly slots: Slot[] = [];

  /** A slot for a request just read, in arrival order. */
  take(correlationId: number, heldBytes: number): Slot {
    const slot: Slot = { correlationId, heldBytes, response: undefined };
    this.slots.push(slot);
    return slot;
  }

  /** A response ready at once, still behind the earlier ones. */
  ready(correlationId: number, response: Buffer[]): void {
    this.slots.push({ correlationId, heldBytes: 0, response });
  }

  get waiting(): number {
    return this.slots.length;
  }

  clear(): void {
    this.slots.length = 0;
  }

  /**
   * Writes every response at the head of the line that is ready, corked so
   * they leave as one writev. Returns true when the socket's buffer is past
   * its high-water mark (wait for 'drain').
   */
  writeReady(socket: Socket): boolean {
    let wrote = false;
    let full = false;
    while (this.slots.length > 0 && this.slots[0]!.response !== undefined) {
      const response = this.slots.shift()!.response;
      if (!response) continue;
      if (!wrote) socket.cork();
      wrote = true;
      for (const chunk of response) {
        if (!socket.write(chunk)) full = true;
      }
    }
    if (wrote) socket.uncork();
    return full;
  }
}
