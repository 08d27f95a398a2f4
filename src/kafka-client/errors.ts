/** The client's failures to reach a broker: the caller may dial again (or another broker). */
export class KafkaConnectionError extends Error {
  override readonly name = 'KafkaConnectionError';
}

/** A broker refused the login: not worth dialing again with the same settings. */
export class KafkaAuthenticationError extends KafkaConnectionError {}
