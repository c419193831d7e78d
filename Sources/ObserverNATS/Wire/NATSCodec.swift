import Foundation

/// How values of one type become frames on the wire and back.
///
/// Every message the bridge publishes is a frame:
///
/// | bytes | content |
/// |---|---|
/// | 1 | format version, ``NATSCodec/formatVersion`` (1) |
/// | 1 | the codec's type tag (``NATSWireValue/natsWireTag``, or 64 for JSON) |
/// | 8 | the publisher: a random identity of the export, little-endian |
/// | 8 | the publisher's sequence number, starting at 1, little-endian |
/// | n | the value |
///
/// With ``NATSOptions/batching`` on, an export also publishes batch frames,
/// several events of one publisher with consecutive sequence numbers:
///
/// | bytes | content |
/// |---|---|
/// | 1 | format version 2 |
/// | 1 | the codec's type tag |
/// | 8 | the publisher, little-endian |
/// | 8 | the first event's sequence number, little-endian |
/// | 4 | the count of events `n` (at least 1), little-endian |
/// | n × (4 + length) | each event: its value's length, little-endian, then the value |
///
/// A frame with another version, another tag, fewer than 18 bytes or a
/// value that does not decode is malformed: the importer counts it and
/// reports ``NATSStatus/malformed(subject:count:)``. A batch frame whose
/// lengths do not fill it exactly, whose count is 0, or whose numbers leave
/// the range a publisher sends counts as one malformed frame; in a good batch
/// frame, each value that does not decode counts as one.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSCodec<Value>: Sendable {
    /// The version byte every frame starts with.
    public static var formatVersion: UInt8 { 1 }

    /// The frame's type tag.
    public let tag: UInt8

    /// Calls `body` with a buffer holding `headerSize` free bytes followed by the encoded value;
    /// false (and `body` not called) when the value does not encode.
    @usableFromInline
    let withFrame: @Sendable (Value, _ headerSize: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) -> Bool

    /// Decodes a value from a frame's payload.
    @usableFromInline
    let decode: @Sendable (UnsafeRawBufferPointer) throws -> Value

    /// A codec from a tag and two functions: `encode` returns the payload
    /// bytes, `decode` reads them back (throwing on bytes that are not a value).
    /// Tags 1–64 are the built-in ones; pick another for your own format.
    public init(
        tag: UInt8, encode: @escaping @Sendable (Value) throws -> Data,
        decode: @escaping @Sendable (Data) throws -> Value
    ) {
        self.tag = tag
        self.withFrame = { value, headerSize, body in
            guard let payload = try? encode(value) else { return false }
            Self.withStackBuffer(byteCount: headerSize + payload.count) { frame in
                payload.copyBytes(
                    to: UnsafeMutableRawBufferPointer(rebasing: frame[headerSize...]).assumingMemoryBound(
                        to: UInt8.self), count: payload.count)
                body(frame)
            }
            return true
        }
        self.decode = { bytes in try decode(Data(bytes)) }
    }

    @usableFromInline
    init(
        tag: UInt8,
        withFrame: @escaping @Sendable (Value, Int, (UnsafeMutableRawBufferPointer) -> Void) -> Bool,
        decode: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Value
    ) {
        self.tag = tag
        self.withFrame = withFrame
        self.decode = decode
    }

    /// Frames live on the stack (`withUnsafeTemporaryAllocation`), unless too large for it.
    @inlinable @inline(__always)
    static func withStackBuffer(byteCount: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 8) { body($0) }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSCodec where Value: NATSWireValue {
    /// The binary encoding of ``NATSWireValue`` types.
    @inlinable
    public static var binary: NATSCodec<Value> {
        NATSCodec(
            tag: Value.natsWireTag,
            withFrame: { value, headerSize, body in
                let size = value.natsWireSize
                withStackBuffer(byteCount: headerSize + size) { frame in
                    value.natsEncode(into: UnsafeMutableRawBufferPointer(rebasing: frame[headerSize...]))
                    body(frame)
                }
                return true
            },
            decode: { bytes in try Value(natsWire: bytes) })
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSCodec where Value: Codable & SendableMetatype {
    /// JSON through `JSONEncoder` / `JSONDecoder`, for any `Codable` value (tag 64).
    public static var json: NATSCodec<Value> {
        NATSCodec(
            tag: 64,
            encode: { value in try JSONEncoder().encode(value) },
            decode: { data in try JSONDecoder().decode(Value.self, from: data) })
    }
}

/// The 18 bytes before a frame's value (see ``NATSCodec``).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
struct FrameHeader: Equatable, Sendable {
    @inlinable
    static var size: Int { 18 }
    var tag: UInt8
    var publisher: UInt64
    var sequence: UInt64

    /// A new publisher identity for a sender's frames: random, never 0.
    static func newPublisher() -> UInt64 {
        var publisher: UInt64 = 0
        while publisher == 0 { publisher = UInt64.random(in: .min ... .max) }
        return publisher
    }

    func write(to frame: UnsafeMutableRawBufferPointer) {
        frame[0] = NATSCodec<Void>.formatVersion
        frame[1] = tag
        frame.storeBytes(of: publisher.littleEndian, toByteOffset: 2, as: UInt64.self)
        frame.storeBytes(of: sequence.littleEndian, toByteOffset: 10, as: UInt64.self)
    }

    /// The header of `frame`, or nil when it is not a frame of this version and tag.
    init?(frame: UnsafeRawBufferPointer, expectedTag: UInt8) {
        guard frame.count >= Self.size, frame[0] == NATSCodec<Void>.formatVersion, frame[1] == expectedTag else {
            return nil
        }
        tag = frame[1]
        publisher = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
        sequence = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 10, as: UInt64.self))
    }

    init(tag: UInt8, publisher: UInt64, sequence: UInt64) {
        self.tag = tag
        self.publisher = publisher
        self.sequence = sequence
    }
}

/// The 22 bytes before a batch frame's events (see ``NATSCodec``), and the walk over them.
/// Pure Swift: the fuzz target compiles this file.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct BatchFrameHeader: Equatable, Sendable {
    static var formatVersion: UInt8 { 2 }
    static var size: Int { 22 }
    /// The length before each event's value.
    static var lengthSize: Int { 4 }
    /// Events a batch frame may carry (its count field is 32 bits; exports stay far below).
    static var maximumCount: Int { 1 << 20 }
    var tag: UInt8
    var publisher: UInt64
    var firstSequence: UInt64
    var count: Int

    func write(to frame: UnsafeMutableRawBufferPointer) {
        frame[0] = Self.formatVersion
        frame[1] = tag
        frame.storeBytes(of: publisher.littleEndian, toByteOffset: 2, as: UInt64.self)
        frame.storeBytes(of: firstSequence.littleEndian, toByteOffset: 10, as: UInt64.self)
        frame.storeBytes(of: UInt32(truncatingIfNeeded: count).littleEndian, toByteOffset: 18, as: UInt32.self)
    }

    /// Calls `body` with each event's sequence number and value, in order. `frame` is the one this
    /// header was read from (``init(frame:expectedTag:)`` checked every length in it).
    func forEachEvent(
        in frame: UnsafeRawBufferPointer, _ body: (_ sequence: UInt64, _ value: UnsafeRawBufferPointer) -> Void
    ) {
        var offset = Self.size
        var sequence = firstSequence
        for index in 0..<count {
            let length = Int(UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += Self.lengthSize
            body(sequence, UnsafeRawBufferPointer(rebasing: frame[offset..<(offset + length)]))
            offset += length
            if index < count - 1 { sequence += 1 }
        }
    }

    /// The events a published frame carries: its count for a well-formed batch frame, otherwise 1.
    static func eventCount(of frame: UnsafeRawBufferPointer) -> Int {
        guard frame.count >= size, frame[0] == formatVersion else { return 1 }
        return BatchFrameHeader(frame: frame, expectedTag: frame[1])?.count ?? 1
    }
}

/// Reading a header (an initializer of its own, so that the struct keeps its memberwise one).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension BatchFrameHeader {
    /// The header of `frame`, or nil when it is not a well-formed batch frame of this tag: at least
    /// one event, at most ``maximumCount``, every length inside the frame and the events filling it
    /// exactly, and every sequence number in ``FrameSequence/valid``.
    init?(frame: UnsafeRawBufferPointer, expectedTag: UInt8) {
        guard frame.count >= Self.size, frame[0] == Self.formatVersion, frame[1] == expectedTag else { return nil }
        tag = frame[1]
        publisher = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
        firstSequence = UInt64(littleEndian: frame.loadUnaligned(fromByteOffset: 10, as: UInt64.self))
        count = Int(UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: 18, as: UInt32.self)))
        guard count >= 1, count <= Self.maximumCount, count <= (frame.count - Self.size) / Self.lengthSize,
            FrameSequence.valid.contains(firstSequence),
            UInt64(count - 1) <= FrameSequence.valid.upperBound - firstSequence
        else { return nil }
        var offset = Self.size
        for _ in 0..<count {
            guard frame.count - offset >= Self.lengthSize else { return nil }
            let length = Int(UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += Self.lengthSize
            guard length <= frame.count - offset else { return nil }
            offset += length
        }
        guard offset == frame.count else { return nil }
    }
}
