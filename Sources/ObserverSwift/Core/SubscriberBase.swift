import CObserverCore
import Synchronization

/// The root of every box stored in a slot. It has no stored properties, so
/// the plainest subscription costs one object header plus its closure.
@usableFromInline
class SubscriberBase: @unchecked Sendable {
    // @unchecked: boxes are created on the subscribing thread and called on
    // sending threads by design; their stored state is immutable or atomic.
    // Handlers are plain closures: the threading contract (a handler runs on
    // the sending thread unless given a queue or the main actor) is documented.

    @usableFromInline
    init() {}

    /// Called once, right after the box has been stored under `handle`.
    func didAdd(handle: oc_handle_t) {}

    /// True once the box will never deliver again and can be swept.
    var isExpired: Bool { false }

    /// Whether the subscription can still deliver; expires it when not.
    func checkLiveness() -> Bool { true }

    /// The identity of the weakly held target, for `unsubscribe(_:)`.
    var targetIdentifier: ObjectIdentifier? { nil }
}

/// State for boxes that can expire on their own: a deallocated target or an
/// exhausted delivery limit. Knows its box's handle so it can remove it.
struct Expiry: ~Copyable {
    // The box's handle, in two atomics: `sequence` is 0 until `didAdd`;
    // `index` is stored before it and read after it (see `didAdd`).
    private let sequence = Atomic<UInt64>(0)
    private let index = Atomic<UInt32>(0)
    private let expired = Atomic<Bool>(false)
    // Unowned: the list outlives every send (sends hold its event strongly),
    // and `expire()` is only reached from a send or a writer of that list.
    private unowned(unsafe) let list: SlotList

    init(list: SlotList) {
        self.list = list
    }

    var isExpired: Bool { expired.load(ordering: .acquiring) }

    func didAdd(handle: oc_handle_t) {
        // Dekker with `expire()`: both sides store then load, sequentially
        // consistent, so at least one of them sees the other and removes.
        // The index is stored first (relaxed); the sequentially consistent
        // store of the sequence releases it to whoever loads the sequence.
        index.store(handle.index, ordering: .relaxed)
        sequence.store(handle.sequence, ordering: .sequentiallyConsistent)
        if expired.load(ordering: .sequentiallyConsistent) {
            list.remove(handle)
        }
    }

    /// Marks the box expired and removes it without blocking; idempotent.
    func expire() {
        if expired.exchange(true, ordering: .sequentiallyConsistent) { return }
        let sequence = sequence.load(ordering: .sequentiallyConsistent)
        if sequence != 0 {
            list.removeFromSendPath(oc_handle_t(sequence: sequence, index: index.load(ordering: .relaxed)))
        }
    }
}
