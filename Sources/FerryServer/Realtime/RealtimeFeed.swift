import FerryCore
import Foundation

/// Carries realtime events from the instance that caused them to every instance's ``RealtimeHub``.
protocol RealtimeFeed: Sendable {
    /// Announces events after their commit. Never throws: an event is a hint, and a lost one costs latency only.
    func publish(_ events: [RealtimeEvent]) async
}

/// One instance on its own (the embedded SQLite engine): events go straight to the local hub.
struct LocalRealtimeFeed: RealtimeFeed {
    let hub: RealtimeHub

    func publish(_ events: [RealtimeEvent]) async {
        for event in events { hub.deliver(event) }
    }
}
