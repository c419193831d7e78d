extension Event {
    /// ``send(_:)`` for a caller already inside a read section entered on
    /// `reader` (the calling thread's): counts the trigger and delivers, but
    /// neither enters nor leaves a section.
    @inlinable
    @inline(__always)
    func send(_ value: Value, inSectionOf reader: SectionReader) {
        triggers.increment(by: reader)
        guard let list = existingList else { return }
        Slots.sendInSection(value, to: list) { $0.receive((), value) }
    }
}
