import FerryClient

extension SyncEngine.Configuration {
    /// An engine that syncs when the test says so: no periodic sync and, unless `realtime`, no realtime stream (these
    /// tests count syncs; pokes would add some). `localChangeDebounce`, when given, replaces the default: an hour keeps
    /// a debounced local-change sync from racing the test on a loaded machine.
    static func manualSync(localChangeDebounce: Duration? = nil, realtime: Bool = false) -> Self {
        var configuration = Self()
        configuration.periodicInterval = nil
        configuration.realtime = realtime
        if let localChangeDebounce { configuration.localChangeDebounce = localChangeDebounce }
        return configuration
    }
}
