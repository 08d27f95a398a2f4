/**
 * Per queue and consumer group, the partitions a pop visits: those that may
 * have messages for the group, in the order they came to have them. The
 * core's pop walk (../../native/pop.ts) answers `idle` for a partition with
 * nothing past the group's position and no live lease, and the pop leaves it
 * out; an append (any write that wakes the partition's poppers) puts it back
 * for every group, and so does the group's position moving back (an offset
 * commit or a seek). A pop over thousands of drained partitions so visits
 * only the few with work. A group's set starts as every partition, the first
 * time it pops the queue. `Q` and `P` are the store's queue and partition
 * (./store.ts, which holds the one instance).
 */
export class PopWork<Q extends { name: string; partitions: readonly P[] }, P> {
  private readonly byQueue = new Map<string, { queue: Q; groups: Map<string, Set<P>> }>();

  /** The group's partitions that may have work, in the order to visit them. */
  of(queue: Q, group: string): Set<P> {
    const groups = this.groupsOf(queue);
    let work = groups.get(group);
    if (!work) {
      work = new Set(queue.partitions);
      groups.set(group, work);
    }
    return work;
  }

  /** A write to the partition: every group may have work there. */
  appended(queue: Q, partition: P): void {
    const found = this.byQueue.get(queue.name);
    if (found?.queue !== queue) return;
    for (const work of found.groups.values()) work.add(partition);
  }

  /** The group's position on the partition may have moved back. */
  moved(queue: Q | undefined, group: string, index: number): void {
    const found = queue && this.byQueue.get(queue.name);
    const partition = queue?.partitions[index];
    if (found && found.queue === queue && partition) found.groups.get(group)?.add(partition);
  }

  /** The group's positions were deleted: its sets start again from every partition. */
  forget(group: string): void {
    for (const { groups } of this.byQueue.values()) groups.delete(group);
  }

  /** The queue was deleted. */
  drop(name: string): void {
    this.byQueue.delete(name);
  }

  private groupsOf(queue: Q): Map<string, Set<P>> {
    let found = this.byQueue.get(queue.name);
    if (found?.queue !== queue) {
      found = { queue, groups: new Map() };
      this.byQueue.set(queue.name, found);
    }
    return found.groups;
  }
}
