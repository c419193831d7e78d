import Foundation
import ObserverSwiftCompat

// The minimal `Observable<T>(value:)` recipe as MVVM view models and view
// controllers use it (a plain class in place of the UIKit view controller);
// only the import changed. The recipe calls its observer at once when it is
// added, then on the main queue after each set.

final class LoginViewModel {
    let username = Observable<String>(value: "")
    let isLoading: Observable<Bool> = Observable(value: false)

    func logIn(as name: String) {
        isLoading.value = true
        username.value = name
        isLoading.value = false
    }
}

final class LoginViewController {
    let viewModel = LoginViewModel()
    var usernameText = "unset"
    var spinnerStates: [Bool] = []

    func viewDidLoad() {
        viewModel.username.addObserver { [weak self] name in
            self?.usernameText = name
        }
        viewModel.isLoading.addObserver(fireNow: false) { [weak self] loading in
            self?.spinnerStates.append(loading)
        }
    }

    func viewWillDisappear() {
        viewModel.username.removeObserver()
        viewModel.isLoading.removeObserver()
    }
}

/// Runs the main queue until `condition` holds (at most 5 seconds).
func drainMainQueue(until condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(5)
    while !condition() && Date() < deadline {
        RunLoop.main.run(until: Date().addingTimeInterval(0.01))
    }
}

/// Runs what the main queue holds now: a block enqueued last runs after it.
func flushMainQueue() {
    final class Flag { var raised = false }
    let flag = Flag()
    DispatchQueue.main.async { flag.raised = true }
    drainMainQueue { flag.raised }
}

final class NameLog {
    var names: [String] = []
}

func observableRecipeFlows() {
    let controller = LoginViewController()
    controller.viewDidLoad()
    check(controller.usernameText == "", "recipe addObserver calls the observer at once (fireNow)")
    check(controller.spinnerStates.isEmpty, "recipe addObserver(fireNow: false) waits for a set")

    controller.viewModel.logIn(as: "ada")
    check(controller.usernameText == "", "recipe observers run on the main queue, after the set returns")
    flushMainQueue()
    check(controller.usernameText == "ada", "recipe observer called on the main queue")
    check(controller.spinnerStates == [true, false], "recipe observer sees every set, in order")

    // One observer per value: a second addObserver replaces the first.
    let log = NameLog()
    controller.viewModel.username.addObserver(fireNow: false) { name in log.names.append(name) }
    controller.viewModel.username.value = "grace"
    flushMainQueue()
    check(log.names == ["grace"] && controller.usernameText == "ada", "recipe addObserver replaces the observer")
    check(controller.viewModel.username.observersCount == 1, "recipe keeps one observer")

    controller.viewWillDisappear()
    controller.viewModel.username.value = "alan"
    controller.viewModel.isLoading.value = true
    flushMainQueue()
    check(log.names == ["grace"] && controller.spinnerStates == [true, false], "recipe removeObserver()")
    check(controller.viewModel.username.observersCount == 0, "recipe removeObserver() leaves no observer")
}
