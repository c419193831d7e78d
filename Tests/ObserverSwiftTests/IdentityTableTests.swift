import ObserverEngine
import XCTest

@testable import ObserverSwift

/// `IdentityTable` against `Dictionary` as the model: random inserts,
/// replacements and removals (with the probe runs that backward-shift
/// deletion must repair), checked after every step.
final class IdentityTableTests: XCTestCase {
    final class Object {}

    /// A value that holds its identity: a reference, one word, never 0.
    final class Labelled: IdentityTableValue, Equatable {
        let object: Object
        let label: String

        init(object: Object, label: String) {
            self.object = object
            self.label = label
        }

        func identity(in _: Void) -> ObjectIdentifier { ObjectIdentifier(object) }

        static func == (lhs: Labelled, rhs: Labelled) -> Bool { lhs.object === rhs.object && lhs.label == rhs.label }
    }

    /// A value whose identity is read from its context, as a registry's
    /// pending entry is: the index of an object in an array, stored plus
    /// one (a value is never all zero bits).
    struct Indexed: IdentityTableValue {
        let storedIndex: Int
        var index: Int { storedIndex - 1 }

        init(index: Int) { storedIndex = index + 1 }

        func identity(in objects: [Object]) -> ObjectIdentifier { ObjectIdentifier(objects[index]) }
    }

    func testMatchesADictionaryUnderRandomOperations() {
        var generator = SystemRandomNumberGenerator()
        let objects = (0..<300).map { _ in Object() }
        let table = IdentityTable<Labelled>()
        var model: [ObjectIdentifier: Labelled] = [:]
        for step in 0..<20_000 {
            let object = objects[Int.random(in: 0..<objects.count, using: &generator)]
            let identifier = ObjectIdentifier(object)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0, 1:
                let value = Labelled(object: object, label: "\(step)")
                XCTAssertEqual(table.updateValue(value, in: ()), model.updateValue(value, forKey: identifier))
            default:
                XCTAssertEqual(table.removeValue(forKey: identifier, in: ()), model.removeValue(forKey: identifier))
            }
            XCTAssertEqual(table.count, model.count)
            if step % 97 == 0 {
                #if DEBUG
                    table.checkConsistency(in: ())
                #endif
                for object in objects {
                    XCTAssertEqual(table[ObjectIdentifier(object)], model[ObjectIdentifier(object)])
                }
            }
        }
        XCTAssertEqual(Set(table.identifiers(in: ())), Set(model.keys))
        XCTAssertEqual(table.storedValues.map(\.label).sorted(), model.values.map(\.label).sorted())
    }

    /// Identities read from the context: the table finds, moves (growth,
    /// backward shift) and removes entries by what the context says.
    func testReadsIdentitiesFromItsContext() {
        let objects = (0..<1000).map { _ in Object() }
        let table = IdentityTable<Indexed>()
        for index in objects.indices { XCTAssertNil(table.updateValue(Indexed(index: index), in: objects)) }
        XCTAssertEqual(table.count, 1000)
        XCTAssertEqual(table.bucketCount, 2048, "kept at most half full")
        for index in stride(from: 0, to: 1000, by: 2) {
            XCTAssertEqual(table.removeValue(forKey: ObjectIdentifier(objects[index]), in: objects)?.index, index)
        }
        #if DEBUG
            table.checkConsistency(in: objects)
        #endif
        for (index, object) in objects.enumerated() {
            XCTAssertEqual(
                table.value(forKey: ObjectIdentifier(object), in: objects)?.index, index % 2 == 1 ? index : nil)
        }
        XCTAssertEqual(
            Set(table.identifiers(in: objects)),
            Set(objects.indices.filter { $0 % 2 == 1 }.map { ObjectIdentifier(objects[$0]) }))
    }

    func testReleasesItsValues() {
        final class Tracked {}
        final class Holder: IdentityTableValue {
            let key: Object
            let tracked: Tracked
            init(key: Object, tracked: Tracked) {
                self.key = key
                self.tracked = tracked
            }
            func identity(in _: Void) -> ObjectIdentifier { ObjectIdentifier(key) }
        }
        weak var stored: Tracked?
        weak var replaced: Tracked?
        do {
            let table = IdentityTable<Holder>()
            let key = Object()
            let first = Tracked()
            replaced = first
            table.updateValue(Holder(key: key, tracked: first), in: ())
            let second = Tracked()
            stored = second
            table.updateValue(Holder(key: key, tracked: second), in: ())
            _ = (first, second)
        }
        XCTAssertNil(replaced)
        XCTAssertNil(stored)
    }
}
