import Foundation
import ObserverEngine

/// The one box a ``KeyedObserverRegistry`` stores under each key of its
/// keymap: the key's own ``ObserverRegistry``, whose protocol views hold the
/// key's observers by the protocols they conform to.
///
/// A key's list in the keymap holds exactly this box from the key's first
/// observer until its last one goes; then the box is removed, which removes
/// the key, and the keymap releases box and registry after a grace period,
/// so a send that found the key may finish with both.
@usableFromInline
final class KeyObservers: Subscriber, @unchecked Sendable {
    // @unchecked: `registry` and `writerLock` are immutable and thread-safe;
    // `handle` and `isRemoved` are only touched under `writerLock`.

    /// The observers of this key.
    @usableFromInline
    let registry: ObserverRegistry
    /// The owning keyed registry's writer lock. Protocol views are made
    /// under it, so that every path that locks `registry` takes this lock
    /// first (one lock order, no deadlock).
    let writerLock: NSRecursiveLock
    /// This box's handle under its key.
    var handle = SlotHandle.notAdded
    /// Set once the box (and so the key) was removed from the keymap.
    var isRemoved = false

    init(registry: ObserverRegistry, writerLock: NSRecursiveLock) {
        self.registry = registry
        self.writerLock = writerLock
    }

    /// Calls `body` with the key and every observer of this key conforming
    /// to `P`, each where its delivery says. The caller is inside a read
    /// section and keeps this box (found in the keymap) alive at +0 until it
    /// ends.
    @inlinable
    func send<Key: Sendable, P>(_ key: Key, _ body: @escaping @Sendable (Key, P) -> Void) {
        let view = registry.existingView(for: P.self) ?? makeView(for: P.self)
        // Inside the caller's read section.
        view.conforming.sendInSection { observer in
            // Only the observers delivered elsewhere get an escaping closure.
            if observer.isSynchronous {
                observer.callIfAlive { body(key, $0) }
            } else {
                observer.deliverLater { body(key, $0) }
            }
        }
    }

    /// Calls `body` on this thread with the key and every observer of this
    /// key conforming to `P` whose delivery allows a call here and now;
    /// returns how many it could not call (see
    /// ``ObserverRegistry/withObserversCallableHere(_:)``).
    @inlinable
    func sendHere<Key, P>(_ key: Key, _ body: (Key, P) -> Void) -> Int {
        let view = registry.existingView(for: P.self) ?? makeView(for: P.self)
        var notCalled = 0
        // Inside the caller's read section.
        view.conforming.sendInSection { observer in
            if observer.mayBeCalledHere {
                observer.callIfAlive { body(key, $0) }
            } else {
                notCalled &+= 1
            }
        }
        return notCalled
    }

    /// The first send for `P` to this key: casts the key's observers once
    /// into a new view, under the owner's writer lock.
    @usableFromInline
    func makeView<P>(for type: P.Type) -> ProtocolView<P> {
        writerLock.lock()
        defer { writerLock.unlock() }
        return registry.view(for: type)
    }
}
