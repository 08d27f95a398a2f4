// Module hooks that make @confluentinc/kafka-javascript unresolvable, as on a machine where
// only `npm install` ran (the binding is a dev dependency and needs a native build).
export async function resolve(specifier, context, next) {
  if (specifier === '@confluentinc/kafka-javascript' || specifier.startsWith('@confluentinc/kafka-javascript/')) {
    throw Object.assign(new Error(`Cannot find package '${specifier}' (hidden by test/support/without-librdkafka)`), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return next(specifier, context);
}
