// The observer the ObservableThread example adds (its protocol is the
// example's own).
final class RandomNumberPrinter: RandomNumberObserver, Sendable {
    func onRandomNumber(_ randomNumber: Int) { print(randomNumber) }
}
let myObserver = RandomNumberPrinter()
// fragment
