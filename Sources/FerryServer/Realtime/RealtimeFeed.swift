import FerryCore
import Foundation

/// Carries realtime events from the instance that caused them to every instance's ``RealtimeHub``.
protocol RealtimeFeed: Sendable {
    /// Announces events after their commit, before the request that made them is answered. Never throws: a lost
    /// commit event costs latency only, but the instances' memory of sessions (``SessionContextCache``) and the
    /// streams' right to carry a space's changes depend on account events, so a feed tries each again, and both are
    /// checked against the database every 30 seconds at most.
    func publish(_ events: [RealtimeEvent]) async
}

/// One instance on its own (the embedded SQLite engine): events go straight to the local hub.
struct LocalRealtimeFeed: RealtimeFeed {
    let hub: RealtimeHub

    func publish(_ events: [RealtimeEvent]) async {
        for event in events { hub.deliver(event) }
    }
}

/// A feed that also tells the notification service of this instance's commits, so devices without a stream are woken.
/// Only the committing instance sees the publish, so each commit is queued once however many instances listen.
struct NotifyingFeed: RealtimeFeed {
    let base: any RealtimeFeed
    let notifications: NotificationService

    func publish(_ events: [RealtimeEvent]) async {
        for case .committed(let space, let seq, let origin) in events {
            notifications.committed(space: space, seq: seq, origin: origin)
        }
        await base.publish(events)
    }
}
