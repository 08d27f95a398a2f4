import { MemoryCore } from '../../src/core/engines/memory/index.js';
import { describeCoreBehaviour } from './behaviour.js';

describeCoreBehaviour('memory', async () => {
  let now = Date.now();
  const core = new MemoryCore({ clock: () => now, maintenanceIntervalMs: 0 });
  return {
    core,
    advanceClock: (ms: number) => {
      now += ms;
    },
    runMaintenance: () => core.runMaintenance(),
  };
});
