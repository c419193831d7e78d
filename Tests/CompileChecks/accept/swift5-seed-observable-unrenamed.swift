// swift-language-mode: 5
// SwiftEvents' and the `Observable<T>` recipe's code in a Swift 5 module with
// only the import changed: plain classes, `[weak self]` handlers that mutate
// their own state, the seeds' `Observable` name.
import ObserverSwiftCompat

final class ItemListViewModel {
    let items: Observable<[String]> = Observable([])
    let isLoading = Observable<Bool>(value: false)
}

final class ItemListViewController {
    private let viewModel = ItemListViewModel()
    var rows: [String] = []
    var spinnerVisible = false

    func viewDidLoad() {
        viewModel.items.bind(self) { [weak self] in self?.rows = $0 }
        viewModel.items.bind(self, queue: .main) { [weak self] _ in self?.reload() }
        viewModel.isLoading.addObserver { [weak self] loading in
            self?.spinnerVisible = loading
        }
    }

    func viewWillDisappear() {
        viewModel.items.unbind(self)
        viewModel.isLoading.removeObserver()
    }

    private func reload() {}
}
