import Foundation
import ObserverSwiftCompat

// SwiftEvents' README (versions 1 and 2), with UIKit types replaced by plain
// classes; only the import changed.

struct SomeItem {}

class ViewModel {
    let items: Observable<[SomeItem]> = Observable([])
    let infoLabel: Observable<String> = Observable("")
}

class View {
    var viewModel = ViewModel()
    var infoLabelText = ""
    var itemUpdates = 0

    func viewDidLoad() {
        bind()
    }

    private func bind() {
        viewModel.items.bind(self) { [weak self] _ in self?.updateItems() }
        viewModel.infoLabel.bind(self) { [weak self] in self?.updateInfoLabel($0) }
    }

    private func updateItems() { itemUpdates += 1 }

    private func updateInfoLabel(_ newText: String) {
        infoLabelText = newText
    }
}

class MyModel {
    let didDownload = Event<Data?>()

    func downloadImage(for url: URL) {
        let image = url.absoluteString.data(using: .utf8)
        didDownload.notify(image)
    }
}

class MyViewController {
    let model = MyModel()
    var image: Data?

    func viewDidLoad() {
        model.didDownload.subscribe(self) { [weak self] image in self?.updateImage(image) }
    }

    private func updateImage(_ image: Data?) {
        self.image = image
    }
}

/// SwiftEvents 1: handlers receive the live target.
class Screen {
    var titles: [String] = []
    let titleChanged = Event<String>()

    func start() {
        titleChanged.subscribe(self) { screen, title in screen.titles.append(title) }
        titleChanged.addSubscriber(self) { screen, title in screen.titles.append("again " + title) }
        titleChanged.trigger("Inbox")
    }
}

func swiftEventsFlows() {
    let view = View()
    view.viewDidLoad()
    view.viewModel.items.value = [SomeItem()]
    view.viewModel.items <<< [SomeItem(), SomeItem()]
    view.viewModel.infoLabel <<< "Hello"
    check(view.itemUpdates == 2 && view.infoLabelText == "Hello", "SwiftEvents Observable.bind")

    let controller = MyViewController()
    controller.viewDidLoad()
    controller.model.downloadImage(for: URL(string: "https://example.org/a.png")!)
    check(controller.image != nil, "SwiftEvents Event.subscribe(self)")

    let someEvent = Event<Int>()
    let someObservable = Observable(0)
    let owner = Screen()
    someEvent.subscribe(owner) { [weak owner] in owner?.titles.append("\($0)") }
    someEvent.trigger(1)
    someEvent.unsubscribe(owner)
    someEvent.trigger(2)
    someObservable.bind(owner) { [weak owner] in owner?.titles.append("v\($0)") }
    someObservable.value = 3
    someObservable.unbind(owner)
    someEvent.unsubscribeAll()
    someObservable.unbindAll()
    check(owner.titles == ["1", "v3"], "SwiftEvents unsubscribe / unbind")
    check(someEvent.subscribersCount == 0 && someObservable.observersCount == 0, "SwiftEvents counts")
    check(someEvent.triggersCount == 2 && someObservable.triggersCount == 1, "SwiftEvents triggersCount")

    someEvent.subscribe(owner, queue: .main) { [weak owner] in owner?.titles.append("main \($0)") }
    someObservable.bind(owner, queue: .main) { [weak owner] in owner?.titles.append("main v\($0)") }

    // SwiftEvents 2.x's thread-safe classes.
    let shared = EventTS<Int>()
    let level = ObservableTS(0)
    let collector = Screen()
    shared.subscribe(collector) { [weak collector] in collector?.titles.append("ts \($0)") }
    level.bind(collector) { [weak collector] in collector?.titles.append("level \($0)") }
    shared.notify(1)
    level <<< 2
    check(collector.titles == ["ts 1", "level 2"], "SwiftEvents EventTS / ObservableTS")
    check(shared.subscribersCount == 1 && level.observersCount == 1, "SwiftEvents EventTS / ObservableTS counts")

    let screen = Screen()
    screen.start()
    check(screen.titles == ["Inbox", "again Inbox"], "SwiftEvents 1 target handlers")
}
