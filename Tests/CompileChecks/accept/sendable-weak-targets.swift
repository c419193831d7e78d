// Sendable weak targets (immutable, locked, or an actor) need no token.
import Dispatch
import Foundation
import ObserverSwiftCompat  // ObserverSwift, and SwiftEvents 2's value-only target form (line 16)

final class Printer: Sendable {
    let prefix: String
    init(prefix: String) { self.prefix = prefix }
    func show(_ line: String) { print(prefix, line) }
}

func connect(_ event: Event<String>, _ name: ObservableValue<String>, _ keyed: KeyedEvent<Int, String>) {
    let printer = Printer(prefix: ">")
    event.subscribe(printer) { printer, line in printer.show(line) }
    event.subscribe(printer, queue: .global()) { printer, line in printer.show(line) }
    event.subscribe(printer) { line in print(line) }  // SwiftEvents 2: the target bounds the life only
    name.replaying.subscribe(printer) { printer, name in printer.show(name) }
    keyed.subscribe(printer, key: 1) { printer, line in printer.show(line) }
}
