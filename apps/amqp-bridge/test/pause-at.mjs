// The crash tests' way to stop the shipped bridge at one point of its work, with nothing of it
// in the binary: preloaded with `node --import` (see `startProgram` in harness.ts), it
// registers a resolve hook that gives the bridge's bin, and only it, a @zoott/amqp-bridge
// whose startAmqpBridge adds the library's own `hooks` option (paused-bridge.mjs).
import { register } from 'node:module';

register('./pause-loader.mjs', import.meta.url);
