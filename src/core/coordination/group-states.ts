import type { CoordinationStore, GroupStateKind, StoredGroupStates } from './leases.js';

/**
 * Writes groups' states under their leases, one way for every kind (a
 * classic group's membership, a KIP-848 group's state): per group, one store
 * after another, in the order asked; a state unchanged since the last store
 * is not written again; and a store refused because another node holds the
 * group's lease now is reported to `refused` (the caller drops the group and
 * forgets the lease, so its members find the new owner). A store that fails
 * for another reason (the database away) answers false and changes nothing
 * here: the next store tries again.
 */
export class GroupStateWriter<K extends GroupStateKind> {
  /** Per group: the state last written (JSON). */
  private readonly written = new Map<string, string>();
  /** Per group: the last store asked for, so stores go one after another. */
  private readonly writing = new Map<string, Promise<boolean>>();

  constructor(
    private readonly kind: K,
    private readonly coordination: CoordinationStore,
    /** The epoch this node holds the group's lease at; null when it holds none. */
    private readonly epochOf: (group: string) => number | null,
    private readonly refused: (group: string) => void,
  ) {}

  /** Stores what `state()` answers when the store's turn comes (null: nothing to store); false when it was not stored. */
  save(group: string, state: () => StoredGroupStates[K] | null): Promise<boolean> {
    const saving = (this.writing.get(group) ?? Promise.resolve(true)).then(() => this.write(group, state()));
    this.writing.set(group, saving);
    // The chain's end is forgotten once reached, so a quiet group holds nothing here.
    void saving.then(() => {
      if (this.writing.get(group) === saving) this.writing.delete(group);
    });
    return saving;
  }

  private async write(group: string, stored: StoredGroupStates[K] | null): Promise<boolean> {
    const json = stored === null ? null : JSON.stringify(stored);
    if (stored === null || json === this.written.get(group)) return true;
    const epoch = this.epochOf(group);
    if (epoch === null) return false;
    let owned: boolean;
    try {
      owned = await this.coordination.saveGroupState(this.kind, group, epoch, stored);
    } catch {
      return false;
    }
    if (!owned) {
      this.refused(group);
      return false;
    }
    this.written.set(group, json!);
    return true;
  }

  /** The state as it was loaded from the store: not written again until it changes. */
  loaded(group: string, stored: StoredGroupStates[K]): void {
    this.written.set(group, JSON.stringify(stored));
  }

  /** Forgets what was written (the group was dropped here, or deleted). */
  forget(group: string): void {
    this.written.delete(group);
  }

  /** Settles once the stores asked for so far are done. */
  settled(group: string): Promise<unknown> {
    return this.writing.get(group) ?? Promise.resolve();
  }
}
