import CNATS
import Foundation

/// Which import, if any, is delivering a received message on the current
/// thread. Exports read it to leave values that arrived from NATS
/// unpublished (no echo loop between two processes that both import and
/// export one subject); imports read it to know when they are cancelled
/// from their own handler, where waiting for the handler would never end.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
enum RemoteDelivery {
    static let key: pthread_key_t = makeThreadKey()

    /// The mirror (``MirroredValueState``) setting a value from its bucket on this thread.
    /// A key of its own, so that `current` is only ever an `ImportedSubject`.
    static let mirrorKey: pthread_key_t = makeThreadKey()

    static var currentMirror: UnsafeMutableRawPointer? {
        pthread_getspecific(mirrorKey)
    }

    /// The mirror whose watcher thread this is (set by the thread when it starts): a status it
    /// reports there may be observed by a handler that cancels the mirror or closes the bridge.
    static let mirrorWatcherKey: pthread_key_t = makeThreadKey()

    static var currentMirrorWatcher: UnsafeMutableRawPointer? {
        pthread_getspecific(mirrorWatcherKey)
    }

    /// Runs `body` with `mirror` marked as applying a bucket value on this thread.
    static func applying<Result>(_ mirror: UnsafeMutableRawPointer, _ body: () -> Result) -> Result {
        let outer = pthread_getspecific(mirrorKey)
        pthread_setspecific(mirrorKey, mirror)
        defer { pthread_setspecific(mirrorKey, outer) }
        return body()
    }

    /// The import delivering on this thread, unretained.
    ///
    /// cnats gives each of the bridge's subscriptions a delivery thread of its own (the
    /// bridge never turns on cnats' shared delivery pool), which runs nothing but that
    /// subscription's message callbacks and, last, its on-complete callback. So
    /// `ImportedSubject.onMessage` sets the mark on the first message and leaves it;
    /// `onComplete` clears it. On every other thread it is nil.
    @inline(__always)
    static var current: UnsafeMutableRawPointer? {
        pthread_getspecific(key)
    }
}
