import { MemoryEngine, type MemoryEngineOptions } from './memory-engine.js';

export { MemoryEngine, defaultMemoryLimitBytes, type MemoryEngineOptions } from './memory-engine.js';

export async function openMemoryEngine(options: MemoryEngineOptions = {}): Promise<MemoryEngine> {
  return new MemoryEngine(options);
}
