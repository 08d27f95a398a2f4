/**
 * The CPU of the PostgreSQL backends serving one gateway, so the durable
 * engine's CPU per record can be shown with its storage's beside Kafka's
 * broker process, which does its storage work itself. The backends are
 * found by their client port: pg_stat_activity's rows named queen-core whose
 * client port is the local port of one of the gateway process's sockets
 * (/proc/<pid>/fd → socket inodes → /proc/net/tcp*). The standby's own work
 * (WAL receipt and replay) is not counted: it is another server's.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { cpuSeconds } from './processes.js';

/** Local TCP ports of the process's sockets. */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

const safeCpu = (pid: number) => {
  try {
    return cpuSeconds(pid);
  } catch {
    return NaN; // gone
  }
};

export class StorageCpu {
  private pids: number[] = [];

  constructor(
    /** One server's URL (where pg_stat_activity lists the gateway's backends). */
    private readonly url: string,
    private readonly gatewayPid: number,
  ) {}

  /** Finds the gateway's backends now (their pool grows under load, so before and after each phase). */
  async refresh(): Promise<void> {
    const ports = localPorts(this.gatewayPid);
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number; client_port: number }>("select pid, client_port from pg_stat_activity where application_name = 'queen-core'");
      this.pids = rows.filter((r) => ports.has(r.client_port)).map((r) => r.pid);
    } finally {
      await client.end();
    }
  }

  /** CPU seconds so far of each backend found by the last refresh. */
  read(): Map<number, number> {
    return new Map(this.pids.map((pid) => [pid, safeCpu(pid)]));
  }

  /**
   * CPU seconds from `start` to `end` of the backends known at both; those
   * first seen in `later` (opened during the phase) count from their birth
   * to then.
   */
  static between(start: Map<number, number>, end: Map<number, number>, later: Map<number, number>): number {
    let total = 0;
    for (const [pid, cpu] of end) if (Number.isFinite(cpu) && start.has(pid)) total += cpu - start.get(pid)!;
    for (const [pid, cpu] of later) if (Number.isFinite(cpu) && !start.has(pid)) total += cpu;
    return total;
  }
}
