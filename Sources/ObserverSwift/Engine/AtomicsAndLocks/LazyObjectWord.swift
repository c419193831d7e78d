/// A word holding a retained reference to an `Object` made on first use: an
/// owner pays for a structure (a slot list, a keymap, a value's extras, a
/// condition) only once something needs it. The engine's one lazily
/// published object: every such word is read and written through this view.
///
/// Several threads may make the object at once; the first to publish wins
/// (release) and the others release theirs and use the winner's (acquire).
/// Readers load it with acquire: its fields are initialized before its
/// publication. The owner's `deinit` calls ``release()``. A view of a word
/// its owner keeps (see `AtomicWord`); it holds nothing itself. Every member
/// is inlined, so that it is specialized where it is used: a generic call
/// would look up `Object`'s metadata on every use.
@frozen @usableFromInline
package struct LazyObjectWord<Object: AnyObject> {
    /// The word's storage, as an owner declares it: among its words, or as
    /// its first stored property (``first(of:)``).
    package typealias Storage = LazyObjectStorage

    @usableFromInline
    let word: AtomicWord<UnsafeMutableRawPointer?>

    @inlinable @inline(__always)
    package init(_ word: AtomicWord<UnsafeMutableRawPointer?>) {
        self.word = word
    }

    /// The word `owner` keeps as its first stored property, a ``Storage``.
    @inlinable @inline(__always)
    package static func first(of owner: AnyObject) -> Self {
        Self(AtomicWords.first(owner))
    }

    /// The object, unretained (the word keeps it), or nil before its first
    /// use. A plain move on x86.
    @inlinable @inline(__always)
    package var existing: Unmanaged<Object>? {
        guard let made = word.load(ordering: .acquiring) else { return nil }
        return Unmanaged<Object>.fromOpaque(made)
    }

    /// Whether the object was made, loaded with `ordering` (sequentially
    /// consistent where the answer must be ordered with other words, as
    /// the publication in ``made(publishing:_:)`` is).
    @inlinable @inline(__always)
    package func isMade(ordering: AtomicLoadOrdering) -> Bool {
        word.load(ordering: ordering) != nil
    }

    /// Calls `body` with the object borrowed (no retain), or returns nil
    /// before its first use.
    @inlinable @inline(__always)
    package func withExisting<Result>(_ body: (Object) -> Result) -> Result? {
        guard let made = word.load(ordering: .acquiring) else { return nil }
        return Unmanaged<Object>.fromOpaque(made)._withUnsafeGuaranteedRef(body)
    }

    /// The object, unretained, made by `make` now if nobody made it yet.
    /// `publishing`: the ordering of the publishing exchange, at least
    /// acquiring and releasing (release: the object is initialized before
    /// another thread sees it; acquire on failure, to use the one another
    /// thread published first); sequentially consistent where a reader's
    /// sequentially consistent load must order the publication with other
    /// words (`ValueExtras.isArmed`).
    @inlinable @inline(__always)
    package func made(
        publishing ordering: AtomicUpdateOrdering = .acquiringAndReleasing, _ make: () -> Object
    ) -> Unmanaged<Object> {
        if let made = word.load(ordering: .acquiring) { return Unmanaged<Object>.fromOpaque(made) }
        let made = Unmanaged.passRetained(make())
        if let published = publish(made, ordering: ordering) {
            made.release()
            return published
        }
        return made
    }

    /// Publishes `object` (retained: the word keeps the reference when this
    /// succeeds) unless the word holds one already: nil when this call
    /// published it, else the object published first, unretained (the
    /// caller still owns `object`'s reference). The engine's one publishing
    /// exchange of an object word; `ordering` as in ``made(publishing:_:)``.
    @inlinable @inline(__always)
    package func publish(
        _ object: Unmanaged<Object>, ordering: AtomicUpdateOrdering = .acquiringAndReleasing
    ) -> Unmanaged<Object>? {
        let published = word.compareExchange(expected: nil, desired: object.toOpaque(), ordering: ordering)
        if published.exchanged { return nil }
        return Unmanaged<Object>.fromOpaque(published.original!)
    }

    /// Releases the object, if it was made: for the owner's `deinit`, when
    /// no other thread can use it.
    @inlinable
    package func release() {
        existing?.release()
    }
}

/// The storage of a ``LazyObjectWord``.
@usableFromInline
package typealias LazyObjectStorage = AtomicWordStorage<UnsafeMutableRawPointer?>
