// Module resolve hook (node:module `register`): the bridge binary's import of
// @zoott/amqp-bridge is answered with paused-bridge.mjs, which imports the real one.
const WRAPPER = new URL('./paused-bridge.mjs', import.meta.url).href;
const BRIDGE_BIN = /\/apps\/amqp-bridge\/dist\/bin\.js$/;

export async function resolve(specifier, context, next) {
  if (specifier === '@zoott/amqp-bridge' && BRIDGE_BIN.test(context.parentURL ?? ''))
    return { url: WRAPPER, shortCircuit: true };
  return next(specifier, context);
}
