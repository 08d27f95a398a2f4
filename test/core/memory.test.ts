import { MemoryEngine } from '../../src/core/engines/memory/index.js';
import { CoreFront } from '../../src/core/front.js';
import { describeCoreBehaviour } from './behaviour.js';

describeCoreBehaviour('memory', async () => {
  let now = Date.now();
  const engine = new MemoryEngine({ clock: () => now, maintenanceIntervalMs: 0 });
  return {
    core: new CoreFront(engine),
    advanceClock: (ms: number) => {
      now += ms;
    },
    runMaintenance: () => engine.maintenance.runMaintenance(),
  };
});
