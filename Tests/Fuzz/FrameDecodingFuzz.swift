// libFuzzer entry over what an import decodes from the network: frame headers, per-publisher
// sequence tracking (gaps, de-duplication, the bounded publisher table) and subject tokens
// (keys). Built by `make fuzz` with `swiftc -sanitize=fuzzer,address` together with the bridge's
// own source files (NATSCodec.swift, NATSWireValue.swift, NATSSubjectKey.swift,
// PublisherSequences.swift): the code under test is the real one, compiled into this module.
//
// An input is read as a series of records: a tag byte chooses what the bytes after it are,
// and the next byte their length. Besides crashes (traps, sanitizer reports), the entry checks
// properties with `fatalError`: each verdict against a model, and that every decoded key is
// canonical (its own tokens give back the token it came from).

import Foundation

/// Reads the fuzzer's bytes.
struct FuzzInput {
    var bytes: UnsafeRawBufferPointer
    var offset = 0

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// The state one input drives: what an at-most-once and an at-least-once import keep.
struct FuzzState {
    var gaps = GapTracker(limits: PublisherLimits(capacity: 4, idleExpiry: 40))
    var filter = DuplicateFilter(limits: PublisherLimits(capacity: 1 << 20, idleExpiry: .max))
    var delivered: [UInt64: Set<UInt64>] = [:]
    var budgeted = DuplicateFilter(limits: PublisherLimits(capacity: 3, idleExpiry: 60), rangeBudget: 8)
    var window = SequenceWindow()
    var windowModel = Set<UInt64>()
    var now: UInt64 = 0

    /// A frame as the importer gets it: header, then the value's decoders.
    mutating func frame(_ frame: UnsafeRawBufferPointer, tag: UInt8) {
        now += 3
        guard let header = FrameHeader(frame: frame, expectedTag: tag) else {
            check(frame.count < FrameHeader.size || frame[0] != 1 || frame[1] != tag, "a frame refused wrongly")
            return
        }
        let valid = FrameSequence.valid.contains(header.sequence)
        let gap = gaps.record(publisher: header.publisher, sequence: header.sequence, now: now)
        check((gap == .malformed) == !valid, "gap verdict \(gap) for \(header.sequence)")
        if case .gap(let missed) = gap { check(missed > 0, "a gap of \(missed)") }
        check(gaps.table.count <= 4, "the publisher table holds \(gaps.table.count) of 4")
        let verdict = filter.record(publisher: header.publisher, sequence: header.sequence, now: now)
        if valid {
            let first = delivered[header.publisher, default: []].insert(header.sequence).inserted
            check(verdict == (first ? .deliver : .duplicate), "\(verdict) for a first=\(first) number")
        } else {
            check(verdict == .malformed, "\(verdict) for \(header.sequence)")
        }
        let budgetedVerdict = budgeted.record(publisher: header.publisher, sequence: header.sequence, now: now)
        check((budgetedVerdict == .malformed) == !valid, "budgeted verdict \(budgetedVerdict)")
        check(budgeted.table.totalWeight <= 8 && budgeted.table.count <= 3, "over the budget")
        let payload = UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...])
        _ = try? Int(natsWire: payload)
        _ = try? Int8(natsWire: payload)
        _ = try? UInt32(natsWire: payload)
        _ = try? Double(natsWire: payload)
        _ = try? Bool(natsWire: payload)
        if let text = try? String(natsWire: payload) {
            check(text.natsWireSize == payload.count, "a string changed size")
        }
        _ = try? Data(natsWire: payload)
    }

    /// Raw numbers into the window, against a set.
    mutating func sequences(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index + 2 <= bytes.count {
            // Small numbers (so that ranges join) or extremes, chosen by the first byte.
            let choice = bytes[index]
            let low = UInt64(bytes[index + 1])
            let number: UInt64
            switch choice % 4 {
            case 0: number = low
            case 1: number = UInt64.max - low
            case 2: number = UInt64(Int64.max) &+ low &- 128
            default: number = low &* 3
            }
            index += 2
            check(window.insert(number) == windowModel.insert(number).inserted, "window disagrees on \(number)")
        }
        let ranges = window.ranges
        check(ranges.count == window.rangeCount, "range count")
        for (lower, upper) in zip(ranges, ranges.dropFirst()) {
            check(lower.upperBound < upper.lowerBound && upper.lowerBound - lower.upperBound > 1, "ranges touch")
        }
        if windowModel.count < 5_000 {
            var covered = 0
            for range in ranges {
                for number in range {
                    check(windowModel.contains(number), "range holds \(number), never inserted")
                    covered += 1
                }
            }
            check(covered == windowModel.count, "ranges cover \(covered) of \(windowModel.count)")
        }
    }
}

/// Subject text as an import receives it: tokens decoded as keys must be canonical.
func subject(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = NATSSubject.isValidPublishSubject(text)
    _ = NATSSubject.isValidPattern(text)
    _ = NATSSubject.matches(Substring(text), pattern: "a.*.>")
    _ = NATSSubject.matches("a.b.c", pattern: text)
    let tokens = text.split(separator: ".", omittingEmptySubsequences: false)
    if let key = String(natsSubjectTokens: tokens) {
        check(key.natsSubjectTokens == tokens, "String key \(key) is not canonical for \(tokens)")
    }
    if let key = Int(natsSubjectTokens: tokens) {
        check(key.natsSubjectTokens == tokens, "Int key \(key) is not canonical for \(tokens)")
    }
    for token in tokens {
        if let unescaped = NATSSubject.unescapeToken(token) {
            check(NATSSubject.escapeToken(unescaped) == token, "token \(token) is not canonical")
        }
    }
    // Any text as a key: one valid token that decodes back.
    let escaped = NATSSubject.escapeToken(text)
    check(
        NATSSubject.isValidPublishSubject(escaped) || escaped.utf8.count > NATSSubject.maximumSubjectBytes,
        "escaped \(text) is no token")
    check(NATSSubject.unescapeToken(Substring(escaped)) == text, "escaping \(text) does not round-trip")
    check(NATSSubject.pattern(forKey: text) == escaped, "pattern(forKey:) differs from the token")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = FuzzInput(bytes: UnsafeRawBufferPointer(start: data, count: size))
    var state = FuzzState()
    while let kind = input.byte(), let length = input.byte() {
        let bytes = input.take(Int(length))
        switch kind % 3 {
        case 0: state.frame(bytes, tag: kind / 3 % 16)
        case 1: state.sequences(bytes)
        default: subject(bytes)
        }
    }
    return 0
}
