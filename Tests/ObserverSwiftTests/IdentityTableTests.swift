import ObserverEngine
import XCTest

@testable import ObserverSwift

/// `IdentityTable` against `Dictionary` as the model: random inserts,
/// replacements and removals (with the probe runs that backward-shift
/// deletion must repair), checked after every step.
final class IdentityTableTests: XCTestCase {
    final class Object {}

    func testMatchesADictionaryUnderRandomOperations() {
        var generator = SystemRandomNumberGenerator()
        let objects = (0..<300).map { _ in Object() }
        let table = IdentityTable<String>()
        var model: [ObjectIdentifier: String] = [:]
        for step in 0..<20_000 {
            let object = objects[Int.random(in: 0..<objects.count, using: &generator)]
            let identifier = ObjectIdentifier(object)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0, 1:
                let value = "\(step)"
                XCTAssertEqual(
                    table.updateValue(value, forKey: identifier), model.updateValue(value, forKey: identifier))
            default:
                XCTAssertEqual(table.removeValue(forKey: identifier), model.removeValue(forKey: identifier))
            }
            XCTAssertEqual(table.count, model.count)
            if step % 97 == 0 {
                #if DEBUG
                    table.checkConsistency()
                #endif
                for object in objects {
                    XCTAssertEqual(table[ObjectIdentifier(object)], model[ObjectIdentifier(object)])
                }
            }
        }
        XCTAssertEqual(Set(table.identifiers), Set(model.keys))
        XCTAssertEqual(table.storedValues.sorted(), model.values.sorted())
    }

    func testReleasesItsValues() {
        final class Tracked {}
        weak var stored: Tracked?
        weak var replaced: Tracked?
        do {
            let table = IdentityTable<Tracked>()
            let key = Object()
            let first = Tracked()
            replaced = first
            table[ObjectIdentifier(key)] = first
            let second = Tracked()
            stored = second
            table[ObjectIdentifier(key)] = second
            _ = (first, second)
        }
        XCTAssertNil(replaced)
        XCTAssertNil(stored)
    }
}
