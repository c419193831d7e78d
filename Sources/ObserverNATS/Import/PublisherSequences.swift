// What an import remembers about each publisher's sequence numbers, and the
// arithmetic on them. Pure Swift (no cnats, no ObserverSwift): the fuzz target
// (Tests/Fuzz) compiles this file with NATSCodec.swift and NATSSubjectKey.swift.

/// The sequence numbers a frame may carry: a publisher numbers its frames 1, 2, 3 and so on, so
/// a number outside `1 ... 2^63 − 1` is not one a publisher sends (at a billion frames a second
/// it would take 292 years to reach 2^63). A frame outside the range is malformed. Inside it,
/// every difference of two numbers fits in an `Int`: no arithmetic on them can overflow.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
enum FrameSequence {
    static let valid: ClosedRange<UInt64> = 1...UInt64(Int64.max)
}

/// What an import does with a frame, decided from its publisher and sequence number.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
enum FrameVerdict: Equatable {
    /// Deliver it.
    case deliver
    /// At-most-once: deliver it; `missed` frames of its publisher before it never arrived.
    case gap(missed: Int)
    /// At-least-once: already delivered; drop it (and acknowledge it).
    case duplicate
    /// Its sequence number is not one a publisher sends (see ``FrameSequence``).
    case malformed
}

/// The bounds of what an import remembers per publisher.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct PublisherLimits: Equatable {
    /// Publishers remembered at most; the least recently seen one is forgotten to make room.
    var capacity: Int
    /// A publisher not seen for this long is forgotten, in nanoseconds.
    var idleExpiry: UInt64

    /// 10 000 publishers, forgotten after 10 minutes without a frame (see AcrossProcesses.md, "Limits").
    static let standard = PublisherLimits(capacity: 10_000, idleExpiry: 600 * 1_000_000_000)
}

/// Per-publisher state, bounded in count and in idle time: a hash table from publisher identity
/// to a slot, and the slots in a doubly linked list from the most to the least recently seen.
/// Every operation is O(1) (amortized for expiry: each slot expires once). A run of frames from
/// one publisher costs no hashing.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct PublisherTable<State> {
    private struct Slot {
        var publisher: UInt64
        /// Nil in a free slot, so that a forgotten publisher's state is released at once.
        var state: State?
        var lastSeen: UInt64
        /// Toward the least recently seen; -1 at the end.
        var older: Int32
        /// Toward the most recently seen; -1 at the end.
        var newer: Int32
    }

    let limits: PublisherLimits
    /// What a state costs (a window's ranges); the table keeps the total in `totalWeight`.
    private let weight: (State) -> Int
    private var slots: [Slot] = []
    private var slotOf: [UInt64: Int32] = [:]
    private var freeSlots: [Int32] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    /// The slot of the previous frame's publisher, valid while `recentPublisher` has it.
    private var recentSlot: Int32 = -1
    private var recentPublisher: UInt64 = 0
    /// Publishers forgotten so far: idle longer than `limits.idleExpiry`, or dropped to make room.
    private(set) var forgotten = 0
    /// The sum of `weight` over the states remembered.
    private(set) var totalWeight = 0

    init(limits: PublisherLimits = .standard, weight: @escaping (State) -> Int = { _ in 0 }) {
        precondition(limits.capacity > 0 && limits.capacity < Int(Int32.max), "capacity out of range")
        self.limits = limits
        self.weight = weight
    }

    /// Publishers remembered now.
    var count: Int { slotOf.count }

    /// Runs `body` on `publisher`'s state (nil when the publisher is not remembered, and `body`
    /// may then set it), `now` being a monotonic time in nanoseconds. A new publisher's state
    /// that `body` leaves nil is not stored; a remembered publisher's state cannot be cleared.
    mutating func update<Result>(
        _ publisher: UInt64, now: UInt64, _ body: (inout State?) -> Result
    ) -> Result {
        expire(now: now)
        let slot: Int32
        if publisher == recentPublisher && recentSlot >= 0 {
            slot = recentSlot
        } else if let found = slotOf[publisher] {
            slot = found
        } else {
            var state: State? = nil
            let result = body(&state)
            if let state { insert(publisher, state, now: now) }
            return result
        }
        touch(slot, now: now)
        recentSlot = slot
        recentPublisher = publisher
        // Moved out of the slot so that `body` mutates the only copy (no copy-on-write).
        var state = slots[Int(slot)].state.take()
        if let state { totalWeight -= weight(state) }
        let result = body(&state)
        if let state { totalWeight += weight(state) }
        slots[Int(slot)].state = state
        return result
    }

    /// Forgets the publisher seen least recently; false when the table is empty.
    mutating func forgetOldest() -> Bool {
        guard oldest >= 0 else { return false }
        remove(oldest)
        return true
    }

    private mutating func insert(_ publisher: UInt64, _ state: State, now: UInt64) {
        if slotOf.count >= limits.capacity, oldest >= 0 { remove(oldest) }
        totalWeight += weight(state)
        let slot = slots.store(
            Slot(publisher: publisher, state: state, lastSeen: now, older: newest, newer: -1), reusing: &freeSlots)
        if newest >= 0 { slots[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        slotOf[publisher] = slot
        recentSlot = slot
        recentPublisher = publisher
    }

    /// Marks `slot` seen at `now`: the most recent.
    private mutating func touch(_ slot: Int32, now: UInt64) {
        slots[Int(slot)].lastSeen = now
        guard slot != newest else { return }
        unlink(slot)
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = -1
        if newest >= 0 { slots[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let older = slots[Int(slot)].older
        let newer = slots[Int(slot)].newer
        if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
    }

    /// Forgets `slot`'s publisher.
    private mutating func remove(_ slot: Int32) {
        unlink(slot)
        let publisher = slots[Int(slot)].publisher
        slotOf[publisher] = nil
        if recentSlot == slot { recentSlot = -1 }
        if let state = slots[Int(slot)].state.take() { totalWeight -= weight(state) }
        freeSlots.append(slot)
        forgotten += 1
        // Release what the state holds (a SequenceWindow's nodes) now, not when the slot is reused.
        if slotOf.isEmpty {
            slots.removeAll(keepingCapacity: false)
            freeSlots.removeAll(keepingCapacity: false)
            newest = -1
            oldest = -1
        }
    }

    /// Forgets the publishers not seen for longer than the idle expiry.
    private mutating func expire(now: UInt64) {
        while oldest >= 0 {
            let seen = slots[Int(oldest)].lastSeen
            guard now > seen, now - seen > limits.idleExpiry else { return }
            remove(oldest)
        }
    }
}

/// At-most-once: each publisher's highest sequence number seen, to report gaps.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct GapTracker {
    private(set) var table: PublisherTable<UInt64>

    init(limits: PublisherLimits = .standard) {
        table = PublisherTable(limits: limits)
    }

    /// The verdict on `sequence` from `publisher`: `.gap` when numbers after the highest one
    /// seen were skipped; `.deliver` for the next number, a first frame, or an older number
    /// (late or repeated: at-most-once delivers it and reports nothing); `.malformed` outside
    /// ``FrameSequence/valid``, which leaves the publisher's state as it was.
    mutating func record(publisher: UInt64, sequence: UInt64, now: UInt64) -> FrameVerdict {
        guard FrameSequence.valid.contains(sequence) else { return .malformed }
        return table.update(publisher, now: now) { highest -> FrameVerdict in
            guard let last = highest else {
                highest = sequence
                return .deliver
            }
            guard sequence > last else { return .deliver }
            highest = sequence
            // Both are in 1 ... Int64.max: the difference fits in an Int.
            let missed = Int(sequence - last) - 1
            return missed > 0 ? .gap(missed: missed) : .deliver
        }
    }
}

/// At-least-once: the sequence numbers each publisher had delivered here, to drop copies.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct DuplicateFilter {
    /// The most ranges all windows of an import hold together: 262 144 (8 MiB at 32 bytes a
    /// range), four times the unacknowledged messages a consumer may have outstanding (the
    /// bridge's consumers allow 65 536), which bounds the holes honest redeliveries make.
    static let standardRangeBudget = 1 << 18

    private(set) var table: PublisherTable<SequenceWindow>
    let rangeBudget: Int
    /// Ranges dropped from a window (its lowest) to keep within `rangeBudget`.
    private(set) var forgottenRanges = 0

    init(limits: PublisherLimits = .standard, rangeBudget: Int = standardRangeBudget) {
        table = PublisherTable(limits: limits) { $0.rangeCount }
        self.rangeBudget = max(1, rangeBudget)
    }

    /// `.deliver` the first time `sequence` of `publisher` comes, `.duplicate` afterwards (while
    /// the publisher and the range holding `sequence` are remembered), `.malformed` outside
    /// ``FrameSequence/valid``. Beyond `rangeBudget` ranges in all, the publisher's own lowest
    /// ranges are forgotten first (a peer making holes pays for them), then the publishers seen
    /// least recently.
    mutating func record(publisher: UInt64, sequence: UInt64, now: UInt64) -> FrameVerdict {
        guard FrameSequence.valid.contains(sequence) else { return .malformed }
        let verdict = table.update(publisher, now: now) { window -> FrameVerdict in
            if window == nil { window = SequenceWindow() }
            return window!.insert(sequence) ? .deliver : .duplicate
        }
        while table.totalWeight > rangeBudget {
            let trimmed = table.update(publisher, now: now) { window -> Bool in
                guard window != nil, window!.rangeCount > 1 else { return false }
                return window!.removeLowest()
            }
            if trimmed {
                forgottenRanges += 1
            } else if !table.forgetOldest() {
                break
            }
        }
        return verdict
    }
}

/// The sequence numbers of one publisher already delivered, as disjoint ranges: redeliveries
/// may come in any order, and a receiver may start in the middle of a publisher's numbers, so
/// neither a maximum nor a floor from 1 would do. Memory grows with the holes (numbers not
/// delivered yet while later ones were), not with the messages: in order, it is one range.
///
/// The ranges are the nodes of a treap (a binary search tree by lower bound, heap-ordered by
/// random priorities) stored in an array: an insertion costs O(log n) expected node visits for
/// n ranges, in any order of arrival; the next number of the highest range costs O(1).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct SequenceWindow {
    private struct Node {
        var lower: UInt64
        var upper: UInt64
        var left: Int32
        var right: Int32
        var priority: UInt32
    }

    private var nodes: [Node] = []
    private var freeNodes: [Int32] = []
    private var root: Int32 = -1
    /// The node of the highest range, -1 when empty.
    private var highest: Int32 = -1
    private var random: UInt64
    /// Nodes visited by insertions so far: the measure of their cost that tests bound.
    private(set) var visits = 0

    init() {
        var seed: UInt64 = 0
        while seed == 0 { seed = UInt64.random(in: .min ... .max) }
        random = seed
    }

    /// The number of disjoint ranges.
    var rangeCount: Int { nodes.count - freeNodes.count }

    /// The ranges in increasing order: sorted, disjoint and not adjacent.
    var ranges: [ClosedRange<UInt64>] {
        var result: [ClosedRange<UInt64>] = []
        var stack: [Int32] = []
        var node = root
        while node >= 0 || !stack.isEmpty {
            while node >= 0 {
                stack.append(node)
                node = nodes[Int(node)].left
            }
            node = stack.removeLast()
            result.append(nodes[Int(node)].lower...nodes[Int(node)].upper)
            node = nodes[Int(node)].right
        }
        return result
    }

    /// Records `sequence`; false when it was delivered already.
    mutating func insert(_ sequence: UInt64) -> Bool {
        if highest >= 0 {
            let top = nodes[Int(highest)]
            if sequence > top.upper {
                if sequence - top.upper == 1 {
                    nodes[Int(highest)].upper = sequence
                } else {
                    highest = add(sequence)
                }
                return true
            }
        } else {
            highest = add(sequence)
            return true
        }
        // The ranges around `sequence`: the last one starting at or below it, the first above.
        var below: Int32 = -1
        var above: Int32 = -1
        var node = root
        while node >= 0 {
            visits &+= 1
            if nodes[Int(node)].lower <= sequence {
                below = node
                node = nodes[Int(node)].right
            } else {
                above = node
                node = nodes[Int(node)].left
            }
        }
        if below >= 0 && sequence <= nodes[Int(below)].upper { return false }
        // Here below.upper < sequence < above.lower: the + 1s cannot overflow.
        let joinsBelow = below >= 0 && nodes[Int(below)].upper + 1 == sequence
        let joinsAbove = above >= 0 && sequence + 1 == nodes[Int(above)].lower
        switch (joinsBelow, joinsAbove) {
        case (true, true):
            nodes[Int(below)].upper = nodes[Int(above)].upper
            if highest == above { highest = below }
            removeNode(lower: nodes[Int(above)].lower)
        case (true, false):
            nodes[Int(below)].upper = sequence
        case (false, true):
            // Still between `below` and `above`'s successor: the tree's order holds.
            nodes[Int(above)].lower = sequence
        case (false, false):
            _ = add(sequence)
        }
        return true
    }

    /// Forgets the lowest range, unless it is the only one; false when there was none to forget.
    mutating func removeLowest() -> Bool {
        guard root >= 0, nodes[Int(root)].left >= 0 || nodes[Int(root)].right >= 0 else { return false }
        var node = root
        while nodes[Int(node)].left >= 0 { node = nodes[Int(node)].left }
        removeNode(lower: nodes[Int(node)].lower)
        return true
    }

    /// Inserts the range `sequence...sequence`; returns its node.
    private mutating func add(_ sequence: UInt64) -> Int32 {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let node = Node(
            lower: sequence, upper: sequence, left: -1, right: -1, priority: UInt32(truncatingIfNeeded: random))
        let index = nodes.store(node, reusing: &freeNodes)
        let (less, greater) = split(root, below: sequence)
        root = merge(merge(less, index), greater)
        return index
    }

    /// Removes the node whose range starts at `lower`.
    private mutating func removeNode(lower: UInt64) {
        let (less, rest) = split(root, below: lower)
        let (found, greater) = lower == .max ? (rest, -1) : split(rest, below: lower + 1)
        precondition(found >= 0 && nodes[Int(found)].left < 0 && nodes[Int(found)].right < 0)
        freeNodes.append(found)
        root = merge(less, greater)
    }

    /// The subtrees of `tree` with lower bounds below `key`, and at or above it.
    private mutating func split(_ tree: Int32, below key: UInt64) -> (Int32, Int32) {
        guard tree >= 0 else { return (-1, -1) }
        visits &+= 1
        if nodes[Int(tree)].lower < key {
            let (less, greater) = split(nodes[Int(tree)].right, below: key)
            nodes[Int(tree)].right = less
            return (tree, greater)
        } else {
            let (less, greater) = split(nodes[Int(tree)].left, below: key)
            nodes[Int(tree)].left = greater
            return (less, tree)
        }
    }

    /// One tree of `less` and `greater`, every key of `less` being below every key of `greater`.
    private mutating func merge(_ less: Int32, _ greater: Int32) -> Int32 {
        guard less >= 0 else { return greater }
        guard greater >= 0 else { return less }
        visits &+= 1
        if nodes[Int(less)].priority >= nodes[Int(greater)].priority {
            nodes[Int(less)].right = merge(nodes[Int(less)].right, greater)
            return less
        } else {
            nodes[Int(greater)].left = merge(less, nodes[Int(greater)].left)
            return greater
        }
    }
}

extension Array {
    /// Stores `element` at the last index of `free` (taking it out), or appends it when `free` is
    /// empty; returns its index. The publisher table's slots and the sequence window's nodes are
    /// arrays whose removed elements' indices are reused this way.
    mutating func store(_ element: Element, reusing free: inout [Int32]) -> Int32 {
        if let reused = free.popLast() {
            self[Int(reused)] = element
            return reused
        }
        append(element)
        return Int32(count - 1)
    }
}
