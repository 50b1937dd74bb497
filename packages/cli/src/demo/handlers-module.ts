// Built as dist/demo-handlers.js: the module `zoott-worker --handlers` loads when the demo
// runs against ZooKeeper, so worker processes run the demo's simulated steps too.
import { sampleHandlers } from './sample-handlers.js';

const handlers = sampleHandlers();
export default handlers;
