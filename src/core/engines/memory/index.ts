import { MemoryCore, type MemoryCoreOptions } from './memory-core.js';

export { MemoryCore, type MemoryCoreOptions } from './memory-core.js';

export async function openMemoryCore(options: MemoryCoreOptions = {}): Promise<MemoryCore> {
  return new MemoryCore(options);
}
