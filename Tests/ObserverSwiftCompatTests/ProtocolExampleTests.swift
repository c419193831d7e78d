import Foundation
import ObserverSwiftCompat
import XCTest

// What the Protocol-typed observers and Observable threads guides' examples
// state (which observers are called, that cancel ends the loop), checked with
// the same types, namespaced so their names do not clash with other tests.
// The guides' code itself is compiled by `make snippets`.

enum ProtocolExample {
    protocol DownloadObserver: AnyObject {
        func downloadProgressed(_ fraction: Double)
    }
    protocol DownloadCompletionObserver: AnyObject {
        func downloadFinished(bytes: Int)
    }

    class Download: ObservableClass {  // or ObservableThreadSafeClass: the same class
        func progress(_ fraction: Double) {
            withObservers { (observer: DownloadObserver) in
                observer.downloadProgressed(fraction)
            }
        }
        func finish(bytes: Int) {
            withObservers { (observer: DownloadCompletionObserver) in
                observer.downloadFinished(bytes: bytes)
            }
        }
    }

    // Observers must be Sendable (they may be called from any thread): these
    // keep their state behind a lock.
    final class ProgressBar: DownloadObserver, @unchecked Sendable {
        // @unchecked: `fractions` is only touched while `lock` is held.
        private let lock = NSLock()
        private var fractions: [Double] = []
        var shown: [Double] { lock.withLock { fractions } }
        func downloadProgressed(_ fraction: Double) { lock.withLock { fractions.append(fraction) } }
    }
    final class Notifier: DownloadObserver, DownloadCompletionObserver, @unchecked Sendable {
        // @unchecked: `sent` is only touched while `lock` is held.
        private let lock = NSLock()
        private var sent: [String] = []
        var messages: [String] { lock.withLock { sent } }
        func downloadProgressed(_ fraction: Double) {}
        func downloadFinished(bytes: Int) { lock.withLock { sent.append("done: \(bytes) bytes") } }
    }

    class SomeBaseClass {}
    final class Thermostat: SomeBaseClass, ProtocolObservable {
        let observerRegistry = ObserverRegistry()
    }
}

enum ThreadExample {
    protocol RandomNumberObserver: AnyObject {
        func onRandomNumber(_ randomNumber: Int)
    }

    class RandomNumberObservableThread: ObservableThread {
        override func main() {
            while isExecuting {  // false once cancel() is called
                let randomNumber = Int.random(in: -9000..<9001)
                withObservers { (observer: RandomNumberObserver) in
                    observer.onRandomNumber(randomNumber)
                }
                Self.sleep(forTimeInterval: 60)  // cancel() and notifyChange() cut it short
            }
        }
    }

    final class RandomNumberPrinter: RandomNumberObserver, @unchecked Sendable {
        // @unchecked: `count` is only touched while `lock` is held.
        private let lock = NSLock()
        private var count = 0
        var printed: Int { lock.withLock { count } }  // (test only)
        func onRandomNumber(_ randomNumber: Int) {
            print("Random Number is: \(randomNumber)")
            lock.withLock { count += 1 }
        }
    }
}

final class ProtocolExampleTests: XCTestCase {
    func testTourProtocol() {
        typealias T = ProtocolExample
        let download = T.Download()
        let bar = T.ProgressBar()
        let notifier = T.Notifier()
        download.addObserver([bar, notifier])  // one observer or an array; held weakly
        download.progress(0.5)  // bar and notifier conform: both are called
        download.finish(bytes: 1_024)  // only notifier conforms
        download.removeObserver(bar)  // later calls skip it
        XCTAssertEqual(bar.shown, [0.5])
        XCTAssertEqual(notifier.messages, ["done: 1024 bytes"])
        download.progress(0.9)
        XCTAssertEqual(bar.shown, [0.5])

        let thermostat = T.Thermostat()
        thermostat.addObserver(notifier)
        thermostat.withObservers { (observer: T.DownloadCompletionObserver) in
            observer.downloadFinished(bytes: 1)
        }
        XCTAssertEqual(notifier.messages, ["done: 1024 bytes", "done: 1 bytes"])
    }

    func testTourThread() {
        typealias T = ThreadExample
        let thread = T.RandomNumberObservableThread()
        let printer = T.RandomNumberPrinter()
        thread.addObserver(printer)  // called on the thread itself
        thread.name = "random-numbers"
        thread.start()
        thread.notifyChange()  // "run your loop again now"
        thread.cancel()  // ends the loop, even mid-sleep
        thread.join()  // or waitUntilFinished(timeout:) -> Bool
        XCTAssertTrue(thread.isFinished)
        // Cancelled at once: the loop ran at most twice.
        XCTAssertLessThanOrEqual(printer.printed, 2)
    }
}
