/// The atomic words of an owner of C observer lists (an ``AnySlotList``, an
/// ``AnyKeyedSlotLists``), kept as the owner's first stored property (see
/// `AtomicWord`): two bytes, then a 4-byte word at its alignment, eight bytes
/// in all.
package struct SlotListWords {
    package var needsSweep = AtomicWordStorage<Bool>(false)
    package var holdsTargets = AtomicWordStorage<Bool>(false)
    package var sweepCursor = AtomicWordStorage<UInt32>(0)

    package static var needsSweepOffset: Int { 0 }
    package static var holdsTargetsOffset: Int { MemoryLayout<UInt8>.stride }
    package static var sweepCursorOffset: Int { MemoryLayout<UInt32>.stride }
}

/// An owner of C observer lists whose first stored property is a
/// ``SlotListWords``: the atomic views of those words.
package protocol SlotListWordsOwner: AnyObject {}

extension SlotListWordsOwner {
    /// Set when an expired box could not be removed at once (a writer lock
    /// was busy on the send path). The next writer call, count or
    /// `ObserverCore.reclaimNow()` does the removal; a send that meets the
    /// box retries it without blocking.
    package var needsSweep: AtomicWord<Bool> { AtomicWords.word(self, at: SlotListWords.needsSweepOffset) }

    /// Set by the first add of a box made for a target (a weak target, a
    /// binding): from then on writers sweep dead targets step by step
    /// (`sweepDeadTargetsStep()`). Owners that never held one pay a load.
    package var holdsTargets: AtomicWord<Bool> { AtomicWords.word(self, at: SlotListWords.holdsTargetsOffset) }

    /// Where the next `sweepDeadTargetsStep()` starts (in a keyed map, in the
    /// C map's table: a table of more than 2³² slots would only restart the
    /// walk early).
    package var sweepCursor: AtomicWord<UInt32> { AtomicWords.word(self, at: SlotListWords.sweepCursorOffset) }
}
