/**
 * Apache Kafka's own command-line tools (kafka-transactions.sh,
 * kafka-metadata-quorum.sh, kafka-log-dirs.sh, ...) run as the scripts run
 * them: their main class from the jars in .cache/apache-kafka/<version>/libs,
 * with a small heap. Asynchronous, so a gateway in this process keeps
 * answering while the tool talks to it.
 */
import { execFile } from 'node:child_process';
import { apacheKafkaInstall } from './apache-kafka.js';

export interface ToolRun {
  exit: number;
  /** stdout's non-empty lines, trimmed. */
  lines: string[];
  stderr: string;
}

/** Runs `org.apache.kafka.tools.<tool>` with `--bootstrap-server` and the arguments. */
export async function kafkaTool(tool: string, bootstrap: string, args: string[]): Promise<ToolRun> {
  const { libs } = await apacheKafkaInstall();
  const argv = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-cp', `${libs}/*`, `org.apache.kafka.tools.${tool}`, '--bootstrap-server', bootstrap, ...args];
  const outcome = await new Promise<{ exit: number; stdout: string; stderr: string }>((resolve) => {
    execFile('java', argv, { encoding: 'utf8', timeout: 90_000 }, (error, stdout, stderr) => resolve({ exit: error ? Number(error.code ?? -1) : 0, stdout, stderr }));
  });
  return { exit: outcome.exit, lines: outcome.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== ''), stderr: outcome.stderr };
}

/** A table the tool prints: header names to each row's columns. */
export function table(lines: string[]): Record<string, string>[] {
  const [head, ...rows] = lines.map((l) => l.split(/\s{2,}|\t/).map((c) => c.trim()));
  return rows.map((row) => Object.fromEntries(head!.map((name, i) => [name, row[i] ?? ''])));
}
