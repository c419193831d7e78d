import CObserverCore

extension ObserverCore {
    /// Keys that currently own an observer list, over every keyed source in
    /// the process (see `oc_keymap_live_keys`). A key is counted from its
    /// first subscription until its last one is removed.
    public static var liveKeys: Int { Int(oc_keymap_live_keys()) }
}
