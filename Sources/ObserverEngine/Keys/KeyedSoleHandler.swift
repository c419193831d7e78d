/// The one plain closure subscribed to a `KeyedEvent` that has no keyed
/// lists, with the key it receives: a ``SoleHandler`` that also keeps its
/// key. The event's word points at it, tagged (see ``KeyedEventObservers``),
/// so an event with one key and one closure pays for this object instead
/// of a keymap, its table, a key entry and a key box. Its lock, its states
/// and its retirement are its superclass's; a send compares its key with
/// the one sent for.
@usableFromInline
package final class KeyedSoleHandler<Key: Hashable, Value>: SoleHandler<Value>, @unchecked Sendable {
    // @unchecked: `storedKey` is written once more, by ``dropHandler()``,
    // when no reader can see the handler; the rest is `SoleHandler`'s.

    /// The key whose sends call the closure; nil once dropped with the
    /// closure, so that a token kept after its subscription ended keeps
    /// neither the closure's captures nor the key. Unchecked exclusivity,
    /// as `closure`'s.
    @usableFromInline @exclusivity(unchecked)
    package var storedKey: Key?

    /// A handler of `key` attached to the event word at `word` (which the
    /// caller then publishes it in).
    @usableFromInline
    package init(_ handler: @escaping (Value) -> Void, key: Key, attachedTo word: UnsafeMutableRawPointer) {
        self.storedKey = key
        super.init(handler, attachedTo: word)
    }

    /// The key. Read only inside a read section that found the handler in
    /// its event's word: a handler drops its key a grace period after its
    /// removal.
    @inlinable @inline(__always)
    package var key: Key { storedKey! }

    /// Whether `key` is this handler's key: the send path's comparison.
    @inlinable @inline(__always)
    package func receives(_ key: Key) -> Bool {
        storedKey == key
    }

    /// Its key no longer counts in ``ObserverCore/liveKeys`` as a sole
    /// handler's (a move into a keymap counts it there).
    package override func didLeaveWord() {
        _ = ObserverCore.keysOfSoleHandlers.wrappingAdd(-1, ordering: .relaxed)
    }

    package override func dropHandler() {
        super.dropHandler()
        storedKey = nil
    }
}
