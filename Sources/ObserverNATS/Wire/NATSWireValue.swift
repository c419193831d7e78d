import Foundation

/// A value with a fast binary form on the wire: the standard integer types,
/// `Double`, `Float`, `Bool`, `String` and `Data` conform. Other `Codable`
/// values travel as JSON through ``NATSCodec/json``.
///
/// Integers are little-endian, floating-point values are their IEEE 754
/// bits, `Bool` is one byte (0 or 1), `String` is its UTF-8 bytes and
/// `Data` its bytes. Every wire type has a one-byte tag that the frame
/// carries, so a receiver expecting another type counts the message as
/// malformed instead of misreading it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public protocol NATSWireValue: SendableMetatype {
    /// Identifies the type on the wire; 1–63 are taken by the built-in types.
    static var natsWireTag: UInt8 { get }
    /// How many bytes ``natsEncode(into:)`` writes for this value.
    var natsWireSize: Int { get }
    /// Writes exactly ``natsWireSize`` bytes at the start of `buffer`.
    func natsEncode(into buffer: UnsafeMutableRawBufferPointer)
    /// Reads a value from the payload of a frame; throws on bytes that are not one.
    init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError)
}

/// Why a payload could not be decoded.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSWireError: Error, Equatable, Sendable {
    /// The payload is not the size this type has on the wire.
    case wrongSize(expected: Int, actual: Int)
    /// The bytes are not a value of the type (invalid UTF-8, a `Bool` other than 0 or 1, bad JSON).
    case invalidBytes(String)
}

/// Fixed-width integers: little-endian, `MemoryLayout<Self>.size` bytes.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public protocol NATSFixedWidthWireValue: NATSWireValue, FixedWidthInteger {}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSFixedWidthWireValue {
    @inlinable
    public var natsWireSize: Int { MemoryLayout<Self>.size }

    @inlinable
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        buffer.storeBytes(of: littleEndian, as: Self.self)
    }

    @inlinable
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        guard bytes.count == MemoryLayout<Self>.size else {
            throw .wrongSize(expected: MemoryLayout<Self>.size, actual: bytes.count)
        }
        self.init(littleEndian: bytes.loadUnaligned(as: Self.self))
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 1 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int8: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 2 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int16: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 3 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int32: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 4 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int64: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 5 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension UInt: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 6 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension UInt8: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 7 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension UInt16: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 8 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension UInt32: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 9 } }
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension UInt64: NATSFixedWidthWireValue { public static var natsWireTag: UInt8 { 10 } }

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Double: NATSWireValue {
    public static var natsWireTag: UInt8 { 11 }
    @inlinable
    public var natsWireSize: Int { 8 }
    @inlinable
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        bitPattern.natsEncode(into: buffer)
    }
    @inlinable
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        self.init(bitPattern: try UInt64(natsWire: bytes))
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Float: NATSWireValue {
    public static var natsWireTag: UInt8 { 12 }
    @inlinable
    public var natsWireSize: Int { 4 }
    @inlinable
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        bitPattern.natsEncode(into: buffer)
    }
    @inlinable
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        self.init(bitPattern: try UInt32(natsWire: bytes))
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Bool: NATSWireValue {
    public static var natsWireTag: UInt8 { 13 }
    @inlinable
    public var natsWireSize: Int { 1 }
    @inlinable
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        buffer[0] = self ? 1 : 0
    }
    @inlinable
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        guard bytes.count == 1 else { throw .wrongSize(expected: 1, actual: bytes.count) }
        switch bytes[0] {
        case 0: self = false
        case 1: self = true
        default: throw .invalidBytes("a Bool is 0 or 1, got \(bytes[0])")
        }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension String: NATSWireValue {
    public static var natsWireTag: UInt8 { 14 }
    public var natsWireSize: Int { utf8.count }
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        var copy = self
        copy.withUTF8 { utf8 in
            if let base = utf8.baseAddress { buffer.baseAddress!.copyMemory(from: base, byteCount: utf8.count) }
        }
    }
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        guard let decoded = String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw .invalidBytes("not UTF-8")
        }
        self = decoded
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Data: NATSWireValue {
    public static var natsWireTag: UInt8 { 15 }
    public var natsWireSize: Int { count }
    public func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: count)
    }
    public init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        self.init(bytes)
    }
}
