// expect-error: type 'Label' does not conform to the 'Sendable' protocol
// `bind` hands the target to whichever thread sets the value.
import ObserverSwift

final class Label {
    var text = ""
}

func connect(_ name: ObservableValue<String>, to label: Label) {
    name.subscribe(label) { label, name in label.text = name }
}
