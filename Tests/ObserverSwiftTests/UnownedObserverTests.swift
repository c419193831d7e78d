import ObserverEngine
import XCTest

@testable import ObserverSwift

/// `UnownedObserver`: one word where there is no Objective-C, whose address
/// is the observer's and stays readable after the observer's deinit; the
/// probe says alive exactly until the deinit starts.
final class UnownedObserverTests: XCTestCase {
    final class Observer {}

    func testItsAddressIsTheObserversAndOutlivesIt() {
        var observer: Observer? = Observer()
        let address = UnsafeRawPointer(Unmanaged.passUnretained(observer!).toOpaque())
        let unowned = UnownedObserver(observer!)
        #if !canImport(ObjectiveC)
            XCTAssertEqual(MemoryLayout<UnownedObserver>.size, MemoryLayout<UInt>.size, "one word")
        #endif
        XCTAssertEqual(unowned.address, address)
        XCTAssertEqual(unowned.identifier, ObjectIdentifier(observer!))
        XCTAssertTrue(unowned.isAlive)
        XCTAssertTrue(unowned.refers(to: observer!))
        // A copy (an unowned retain) is the same observer.
        let copies = [unowned, unowned]
        XCTAssertEqual(copies[1].address, address)
        observer = nil
        // The allocation is kept: the address is still the observer's.
        XCTAssertFalse(unowned.isAlive)
        XCTAssertTrue(unowned.hasStartedDeinit)
        XCTAssertNil(unowned.strongObserver())
        XCTAssertEqual(unowned.address, address)
        XCTAssertEqual(copies[0].address, address)
    }
}
