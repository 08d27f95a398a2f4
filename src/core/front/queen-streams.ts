import type { Core } from '../core.js';
import type { Engine } from '../engine.js';
import { runCycle } from '../streams/cycle.js';
import { FlushGuard } from '../streams/flush-guard.js';
import { registerQuery } from '../streams/registry.js';
import { getState } from '../streams/state.js';

/**
 * The front's Queen streams calls (../streams): a query's registration, its
 * cycles (state, output pushes and acks in one native transaction) and its
 * state, over the core's own KV and native calls.
 */
export class QueenStreamsCalls<E extends Engine> {
  /** Orders Queen streams' flushes after the main loops' cycles (../streams/flush-guard.ts). */
  private readonly flushGuard: FlushGuard;

  constructor(
    private readonly open: () => E,
    private readonly core: Core,
  ) {
    this.flushGuard = new FlushGuard(() => this.open().native.now());
  }

  async streamsRegisterQuery(req: Parameters<Core['streamsRegisterQuery']>[0]) {
    this.open();
    return registerQuery(this.core, req);
  }

  async streamsCycle(req: Parameters<Core['streamsCycle']>[0]) {
    const native = this.open().native;
    return runCycle(this.core, this.flushGuard, req, native.now());
  }

  async streamsStateGet(req: Parameters<Core['streamsStateGet']>[0]) {
    this.open();
    return { rows: await getState(this.core, this.flushGuard, req) };
  }
}
