/// RAW: the floor. A plain Swift array of closures, called in a loop — what
/// a single-threaded app writes by hand, with no thread safety and no way to
/// unsubscribe one observer. A `let` array in a final class, so the compiler
/// knows it cannot change while a send iterates it.
///
/// Why RAW costs a retain and a release per call: every plain-Swift loop over
/// an array of closures we could write (`for in`, `withUnsafeBufferPointer`,
/// an index loop, `Span`, `forEach`) copies each closure (+1) before calling
/// it; `objdump` of this target shows `swift_retain`/`swift_release` around
/// every indirect call. `RAW +0 (unsafe)` below is the same loop with that
/// copy removed by unsafe API (what ObserverSwift does inside): shown as the
/// absolute floor, not used as the reference.
final class RawObservers {
    let handlers: [(Int) -> Void]

    init(_ handlers: [(Int) -> Void]) {
        self.handlers = handlers
    }

    /// The loop a user writes first.
    @inline(__always)
    func send(_ value: Int) {
        for handler in handlers {
            handler(value)
        }
    }

    /// The same loop over the array's buffer: no bounds checks and no
    /// retain of each element (the buffer is borrowed for the whole loop).
    @inline(__always)
    func sendThroughBuffer(_ value: Int) {
        handlers.withUnsafeBufferPointer { buffer in
            for handler in buffer {
                handler(value)
            }
        }
    }
}

extension Contender {
    /// RAW with the `for handler in handlers` loop, over `count` closures capturing `sink`.
    static func raw(count: Int, sink: Sink) -> Contender {
        let observers = RawObservers((0..<count).map { _ in { value in sink.total &+= value } })
        return Contender(
            implementation: "RAW", deliveriesPerSend: count,
            send: { sends in rawSend(observers, sends: sends) },
            checksum: { sink.total })
    }

    /// RAW through `withUnsafeBufferPointer`.
    static func rawBuffer(count: Int, sink: Sink) -> Contender {
        let observers = RawObservers((0..<count).map { _ in { value in sink.total &+= value } })
        return Contender(
            implementation: "RAW (buffer)", deliveriesPerSend: count,
            send: { sends in rawSendThroughBuffer(observers, sends: sends) },
            checksum: { sink.total })
    }
}

extension Contender {
    /// The floor without the per-call copy: boxes borrowed at +0 with
    /// `Unmanaged._withUnsafeGuaranteedRef`. Not something a user writes.
    static func rawBorrowed(count: Int, sink: Sink) -> Contender {
        let boxes = (0..<count).map { _ in HandlerBox { value in sink.total &+= value } }
        return Contender(
            implementation: "RAW +0 (unsafe)", deliveriesPerSend: count,
            send: { sends in rawSendBorrowed(boxes, sends: sends) },
            checksum: { sink.total })
    }
}

/// A closure in a class box, so that it can be borrowed through `Unmanaged`.
final class HandlerBox {
    let handler: (Int) -> Void
    init(_ handler: @escaping (Int) -> Void) { self.handler = handler }
}

@inline(never)
func rawSendBorrowed(_ boxes: [HandlerBox], sends: Int) {
    boxes.withUnsafeBufferPointer { buffer in
        for value in stride(from: 1, through: sends, by: 1) {
            for index in buffer.indices {
                Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { $0.handler(value) }
            }
        }
    }
}

// The send loops live in functions of their own, like a user's code: the
// array is a `let` reached through a parameter, not a global.
@inline(never)
func rawSend(_ observers: RawObservers, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.send(value)
    }
}

@inline(never)
func rawSendThroughBuffer(_ observers: RawObservers, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.sendThroughBuffer(value)
    }
}
