import { CounterFamily, HistogramFamily, type CounterSlot, type HistogramSlot } from './families.js';
import { processRegistry } from './process.js';

/**
 * The internal RPC between gateways and the core: round trips as the client
 * (a gateway, the bridge) sees them, and calls as the core serves them, by
 * method and outcome (ok, or the error code the call failed with).
 */

// A core call on loopback takes well under a millisecond; long-polls wait up to their maxWait (seconds).
const ROUND_TRIP_BOUNDS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const clientDuration = new HistogramFamily('queen_rpc_client_call_duration_seconds', 'Round trips of core calls made over the internal RPC, from sending to the answer, in seconds (long-polls included), by method.', ['method'], ROUND_TRIP_BOUNDS_S, processRegistry);
const clientCalls = new CounterFamily('queen_rpc_client_calls_total', 'Core calls made over the internal RPC, by method and outcome (ok or the error code).', ['method', 'outcome'], processRegistry);
const serverDuration = new HistogramFamily('queen_rpc_server_call_duration_seconds', 'Core calls served over the internal RPC, from arrival to answer, in seconds, by method.', ['method'], ROUND_TRIP_BOUNDS_S, processRegistry);
const serverCalls = new CounterFamily('queen_rpc_server_calls_total', 'Core calls served over the internal RPC, by method and outcome (ok or the error code).', ['method', 'outcome'], processRegistry);

/** One method's slots on one side of the hop. */
export class RpcMethodMetrics {
  private readonly ok: CounterSlot;
  private readonly failed = new Map<string, CounterSlot>();

  constructor(
    private readonly method: string,
    private readonly duration: HistogramSlot,
    private readonly calls: CounterFamily,
  ) {
    this.ok = calls.child(method, 'ok');
  }

  /** A call done after `seconds`: `failure` is the error's code, null when it succeeded. */
  done(seconds: number, failure: string | null): void {
    this.duration.observe(seconds);
    if (failure === null) {
      this.ok.value++;
      return;
    }
    let slot = this.failed.get(failure);
    if (!slot) this.failed.set(failure, (slot = this.calls.child(this.method, failure)));
    slot.value++;
  }
}

const clientSide = new Map<string, RpcMethodMetrics>();
const serverSide = new Map<string, RpcMethodMetrics>();

function methodMetrics(side: Map<string, RpcMethodMetrics>, method: string, duration: HistogramFamily, calls: CounterFamily): RpcMethodMetrics {
  let metrics = side.get(method);
  if (!metrics) side.set(method, (metrics = new RpcMethodMetrics(method, duration.child(method), calls)));
  return metrics;
}

export const rpcClientMetrics = (method: string): RpcMethodMetrics => methodMetrics(clientSide, method, clientDuration, clientCalls);
export const rpcServerMetrics = (method: string): RpcMethodMetrics => methodMetrics(serverSide, method, serverDuration, serverCalls);

/** The error code a failed call reports (CoreError and RpcError carry one), else "error". */
export function failureCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'error';
}
