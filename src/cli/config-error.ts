/** A mistake in the settings: one sentence saying what to fix; the command prints it and exits with code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
