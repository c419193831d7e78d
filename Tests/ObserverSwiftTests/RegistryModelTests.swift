import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// `ObserverRegistry` against a model (the set of registered, live
/// observers): random adds, repeated adds, removals, token cancels,
/// deallocations, sends through one or two protocols and
/// `removeAllObservers`. After every step the registry holds exactly the
/// model's observers, and (debug builds) its identity table and pending
/// adds are consistent; every send calls exactly the model's observers that
/// conform.
final class RegistryModelTests: XCTestCase {
    func testMatchesAModelUnderRandomOperations() {
        var generator = SystemRandomNumberGenerator()
        let registry = ObserverRegistry()
        var alive: [AlphaAndBeta?] = (0..<200).map { AlphaAndBeta("\($0)") }
        var tokens: [Int: Subscription] = [:]
        var model = Set<Int>()
        var sent = 0
        for step in 0..<6_000 {
            let slot = Int.random(in: 0..<alive.count, using: &generator)
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<40:
                guard let observer = alive[slot] else {
                    alive[slot] = AlphaAndBeta("\(slot) again")
                    continue
                }
                let token = registry.addObserver(observer)
                XCTAssertEqual(token.isActive, !model.contains(slot), "an add is new exactly when not registered")
                if token.isActive { tokens[slot] = token }
                model.insert(slot)
            case 40..<55:
                guard let observer = alive[slot] else { continue }
                XCTAssertEqual(registry.removeObserver(observer), model.contains(slot))
                model.remove(slot)
            case 55..<65:
                guard let token = tokens.removeValue(forKey: slot) else { continue }
                XCTAssertEqual(token.cancel(), model.contains(slot) && alive[slot] != nil)
                model.remove(slot)
            case 65..<72:
                // Deallocated: its registration ends, whatever state it was in.
                alive[slot] = nil
                model.remove(slot)
                tokens[slot] = nil
            case 72..<90:
                sent += 1
                let value = sent
                registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                expectCalledExactlyTheRegistered("alpha \(value)", alive, model, step: step)
            case 90..<98:
                sent += 1
                let value = sent
                registry.withObservers { (observer: BetaObserver) in observer.beta(value) }
                expectCalledExactlyTheRegistered("beta \(value)", alive, model, step: step)
            default:
                // Dead observers were dropped by the last step's observerCount.
                XCTAssertEqual(registry.removeAllObservers(), model.count)
                model.removeAll()
                tokens.removeAll()
            }
            #if DEBUG
                registry.checkConsistency()
            #endif
            XCTAssertEqual(registry.observerCount, model.count, "step \(step)")
            for (index, observer) in alive.enumerated() {
                guard let observer else { continue }
                XCTAssertEqual(registry.contains(observer), model.contains(index), "step \(step), observer \(index)")
            }
        }
        withExtendedLifetime(alive) {}
    }

    /// Every live observer's last call is `call` exactly when the model
    /// holds it: the send reached the registered ones and no other.
    private func expectCalledExactlyTheRegistered(
        _ call: String, _ alive: [AlphaAndBeta?], _ model: Set<Int>, step: Int
    ) {
        for (index, observer) in alive.enumerated() {
            guard let observer else { continue }
            XCTAssertEqual(
                observer.recorded.last == call, model.contains(index),
                "step \(step): observer \(index) called with \(call) exactly when registered")
        }
    }
}
