// libFuzzer entry over what an import decodes from the network: frame headers (single and
// batch frames, the latter against a model of the format written here), per-publisher
// sequence tracking (gaps, de-duplication, the bounded publisher table) and subject tokens
// (keys). Built by `make fuzz` with `swiftc -sanitize=fuzzer,address` together with the bridge's
// own source files (Wire/NATSCodec.swift, Wire/NATSWireValue.swift, Wire/NATSSubjectKey.swift,
// Import/PublisherSequences.swift): the code under test is the real one, compiled into this module.
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

    /// A frame as the importer gets it: a single frame (header, then the value's decoders) or a
    /// batch frame (header, then each event as a single frame's).
    mutating func frame(_ frame: UnsafeRawBufferPointer, tag: UInt8) {
        now += 3
        if frame.count > 0 && frame[0] == BatchFrameHeader.formatVersion {
            batch(frame, tag: tag)
            return
        }
        guard let header = FrameHeader(frame: frame, expectedTag: tag) else {
            check(frame.count < FrameHeader.size || frame[0] != 1 || frame[1] != tag, "a frame refused wrongly")
            return
        }
        event(
            publisher: header.publisher, sequence: header.sequence,
            payload: UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...]))
    }

    /// A batch frame: decoded only when a model of the format (written here, apart from the
    /// decoder) finds it well-formed, and then into exactly the model's events.
    mutating func batch(_ frame: UnsafeRawBufferPointer, tag: UInt8) {
        let model = Self.batchModel(frame, tag: tag)
        let header = BatchFrameHeader(frame: frame, expectedTag: tag)
        check((header == nil) == (model == nil), "batch decoder says \(header != nil), model \(model != nil)")
        let ownTag = frame.count > 1 ? frame[1] : tag
        let ownModel = ownTag == tag ? model : Self.batchModel(frame, tag: ownTag)
        check(BatchFrameHeader.eventCount(of: frame) == (ownModel?.count ?? 1), "event count")
        guard let header, let model else { return }
        var visited: [(UInt64, Range<Int>)] = []
        header.forEachEvent(in: frame) { sequence, payload in
            let start = payload.baseAddress.map { $0 - frame.baseAddress! } ?? 0
            visited.append((sequence, start..<(start + payload.count)))
        }
        check(visited.count == model.count, "visited \(visited.count) of \(model.count) events")
        for (index, (sequence, range)) in visited.enumerated() {
            check(sequence == header.firstSequence + UInt64(index), "event \(index) numbered \(sequence)")
            check(range == model[index], "event \(index) at \(range), model \(model[index])")
            event(
                publisher: header.publisher, sequence: sequence,
                payload: UnsafeRawBufferPointer(rebasing: frame[range]))
        }
    }

    /// The byte ranges of a batch frame's values, or nil when it is malformed (see `NATSCodec`).
    static func batchModel(_ frame: UnsafeRawBufferPointer, tag: UInt8) -> [Range<Int>]? {
        let bytes = Array(frame)
        func number(_ at: Int, _ width: Int) -> UInt64? {
            guard at + width <= bytes.count else { return nil }
            return (0..<width).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
        }
        guard bytes.count >= 22, bytes[0] == 2, bytes[1] == tag, let first = number(10, 8),
            let count = number(18, 4), count >= 1, count <= 1 << 20
        else { return nil }
        let last = first.addingReportingOverflow(count - 1)
        guard first >= 1, !last.overflow, last.partialValue <= UInt64(Int64.max) else { return nil }
        var ranges: [Range<Int>] = []
        var at = 22
        for _ in 0..<count {
            guard let length = number(at, 4) else { return nil }
            at += 4
            guard UInt64(bytes.count - at) >= length else { return nil }
            ranges.append(at..<(at + Int(length)))
            at += Int(length)
        }
        return at == bytes.count ? ranges : nil
    }

    /// One event, as the importer checks it whether it came alone or in a batch.
    mutating func event(publisher: UInt64, sequence: UInt64, payload: UnsafeRawBufferPointer) {
        let valid = FrameSequence.valid.contains(sequence)
        let gap = gaps.record(publisher: publisher, sequence: sequence, now: now)
        check((gap == .malformed) == !valid, "gap verdict \(gap) for \(sequence)")
        if case .gap(let missed) = gap { check(missed > 0, "a gap of \(missed)") }
        check(gaps.table.count <= 4, "the publisher table holds \(gaps.table.count) of 4")
        let verdict = filter.record(publisher: publisher, sequence: sequence, now: now)
        if valid {
            let first = delivered[publisher, default: []].insert(sequence).inserted
            check(verdict == (first ? .deliver : .duplicate), "\(verdict) for a first=\(first) number")
        } else {
            check(verdict == .malformed, "\(verdict) for \(sequence)")
        }
        let budgetedVerdict = budgeted.record(publisher: publisher, sequence: sequence, now: now)
        check((budgetedVerdict == .malformed) == !valid, "budgeted verdict \(budgetedVerdict)")
        check(budgeted.table.totalWeight <= 8 && budgeted.table.count <= 3, "over the budget")
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

/// Whether two token lists are the same bytes (`==` on `Substring`s compares canonical
/// equivalents as equal, and a subject is bytes).
func sameBytes(_ left: [Substring], _ right: [Substring]) -> Bool {
    left.count == right.count && zip(left, right).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
}

/// Subject text as an import receives it: tokens decoded as keys must be canonical, to the byte.
func subject(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = NATSSubject.isValidPublishSubject(text)
    _ = NATSSubject.isValidPattern(text)
    _ = NATSSubject.matches(Substring(text), pattern: "a.*.>")
    _ = NATSSubject.matches("a.b.c", pattern: text)
    // As an import splits what it receives: at each `.` byte.
    let tokens = NATSSubject.tokens(of: text)
    if let key = String(natsSubjectTokens: tokens) {
        check(sameBytes(key.natsSubjectTokens, tokens), "String key \(key) is not canonical for \(tokens)")
    }
    if let key = Int(natsSubjectTokens: tokens) {
        check(sameBytes(key.natsSubjectTokens, tokens), "Int key \(key) is not canonical for \(tokens)")
    }
    for token in tokens {
        if let unescaped = NATSSubject.unescapeToken(token) {
            check(NATSSubject.escapeToken(unescaped).utf8.elementsEqual(token.utf8), "token \(token) is not canonical")
        }
    }
    // Any text as a key: one valid token that decodes back to a key equal under `==`, and whose own
    // token is the same bytes.
    let escaped = NATSSubject.escapeToken(text)
    check(
        NATSSubject.isValidPublishSubject(escaped)
            || NATSSubject.quotedSubjectBytes(escaped) > NATSSubject.maximumSubjectBytes,
        "escaped \(text) is no token")
    let decoded = NATSSubject.unescapeToken(Substring(escaped))
    check(decoded == text, "escaping \(text) does not round-trip")
    check(
        decoded.map { NATSSubject.escapeToken($0).utf8.elementsEqual(escaped.utf8) } ?? false,
        "the key of \(escaped) has another token")
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
