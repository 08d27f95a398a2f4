/** The Kafka server's limits: how much one client, and all of them together, may make the gateway hold. */

export interface ServerLimits {
  /** Largest request frame accepted; a bigger size prefix closes the connection before anything is allocated. */
  maxFrameBytes: number;
  maxConnections: number;
  /** Connections accepted at once from one IP address. */
  maxConnectionsPerIp: number;
  /** Connections with no traffic and nothing in flight for this long are closed; 0 = never. */
  idleTimeoutMs: number;
  /** A frame, once begun, must arrive whole within this long (time paused by the gateway aside); 0 = no deadline. */
  frameTimeoutMs: number;
  /** Reading from a connection pauses while this many of its requests are unanswered. */
  maxInFlightPerConnection: number;
  /**
   * Request bytes held at once across all connections (frames being read and
   * requests being handled); past it, connections stop reading until room is
   * made. At least maxFrameBytes.
   */
  maxBufferedBytes: number;
  /**
   * Largest frame a SASL listener reads before the client has authenticated
   * (Kafka's sasl.server.max.receive.size): an unauthenticated peer cannot
   * make the gateway buffer a large frame.
   */
  saslMaxReceiveBytes: number;
  /** A client on a SASL or TLS listener must finish authenticating (TLS handshake, SASL exchange) within this long; 0 = no deadline. */
  authenticationTimeoutMs: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxFrameBytes: 100 * MIB,
  maxConnections: 10_000,
  // Kafka's max.connections.per.ip is unlimited; a tenth of the total keeps one
  // host from taking every slot while leaving room for test suites that open
  // hundreds of clients on loopback.
  maxConnectionsPerIp: 1_000,
  // Kafka's connections.max.idle.ms.
  idleTimeoutMs: 600_000,
  // librdkafka's socket.timeout.ms: a client has given up on a request by then.
  frameTimeoutMs: 60_000,
  maxInFlightPerConnection: 100,
  // Two and a half maximum frames: room for large produce batches from a few
  // clients at once, a bound the process can always afford.
  maxBufferedBytes: 256 * MIB,
  // Kafka's sasl.server.max.receive.size default.
  saslMaxReceiveBytes: 512 * 1024,
  // Kafka has no deadline of its own here (only connections.max.idle.ms); a
  // client that authenticates does so in milliseconds, and an idle
  // unauthenticated socket should not hold a slot for ten minutes.
  authenticationTimeoutMs: 10_000,
});

/** Checks limits given to the library; the CLI's settings check the same before anything starts. */
export function checkLimits(limits: ServerLimits): ServerLimits {
  if (limits.maxBufferedBytes < limits.maxFrameBytes) {
    throw new Error(
      `maxBufferedBytes (${limits.maxBufferedBytes}) is below maxFrameBytes (${limits.maxFrameBytes}); a frame of the largest size could never be read. Raise maxBufferedBytes or lower maxFrameBytes.`,
    );
  }
  return limits;
}
