import CObserverCore

/// The calling thread's reader in the core's epoch, and the read sections it
/// enters (`oc_epoch.h`). While a section is open, every box a send found in
/// a slot list stays allocated; a section never blocks a writer.
///
/// A reader is registered on a thread's first use and recycled after the
/// thread exits, so it identifies a running thread (``threadIdentity``).
@usableFromInline
struct SectionReader {
    @usableFromInline
    let record: OpaquePointer

    @inlinable
    init(record: OpaquePointer) {
        self.record = record
    }

    /// The calling thread's reader.
    @inlinable
    static var current: SectionReader { SectionReader(record: oc_reader_current()) }

    /// A word unique to the calling thread among running threads, never 0.
    @inlinable
    var threadIdentity: UInt { UInt(bitPattern: record) }

    /// Enters a read section (sections nest). Must run on the reader's thread.
    @inlinable
    func begin() { oc_read_begin_reader(record) }

    /// Leaves the section entered last by ``begin()`` or ``beginClaiming(_:)``.
    @inlinable
    func end() { oc_read_end(record) }

    /// Enters a read section and tries to claim `turn` for this thread with
    /// the same barrier; true when claimed. The section is entered either
    /// way: the caller ends it.
    @inlinable
    func beginClaiming(_ turn: NotificationTurn) -> Bool {
        oc_read_begin_claiming(record, turn.word, threadIdentity)
    }
}

/// Runs `body` inside a read section on the calling thread.
@inlinable
@inline(__always)
func withReadSection<Result>(_ body: () throws -> Result) rethrows -> Result {
    let reader = oc_read_begin()
    defer { oc_read_end(reader) }
    return try body()
}
