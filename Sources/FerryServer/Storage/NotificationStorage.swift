import FerryCore
import Foundation

/// A background notification claimed for sending: at most one waits per device, whatever the number of commits.
struct QueuedNotification: Sendable, Equatable {
    var deviceID: UUID
    /// The device's token now; `nil` when it was cleared since the notification was queued.
    var deviceToken: String?
    var environment: PushEnvironment
    /// The space and sequence number of the latest commit it announces.
    var space: UUID
    var seq: Int64
    /// Raised by every commit queued for the device: a send that finishes under an older version leaves the newer
    /// commit waiting.
    var version: Int
    /// Failed tries so far.
    var attempts: Int
}

/// A device a visible notification goes to.
struct AlertTarget: Sendable, Equatable {
    var deviceID: UUID
    var deviceToken: String
    var environment: PushEnvironment
}

/// How a claimed notification's send ended.
enum NotificationOutcome: Sendable, Equatable {
    /// Sent; the device gets no other background notification before `nextAllowed`.
    case sent(nextAllowed: Date)
    /// Not sent for now; try again at the date.
    case retry(at: Date)
    /// Not sent, and never will be (a refusal that trying again does not change).
    case dropped
    /// APNs rejected the token: the device's token is cleared and its notification forgotten.
    case tokenRejected
}

/// The queue of background notifications, kept in the database so that several instances send each once and a slow
/// or failing APNs never holds a commit.
protocol NotificationStorage: Sendable {
    /// Queues a notification of `space`'s commit up to `seq` for every device of the space's members that has a push
    /// token, is not revoked, is not `origin` and has no open stream at `now`. A device with one waiting keeps its due
    /// time; otherwise it is due at `dueAt`, or later when its last one was sent too recently.
    func queueNotifications(space: UUID, seq: Int64, origin: UUID?, dueAt: Date, now: Date) async throws
    /// Claims up to `limit` notifications due at `now` until `leaseUntil`: no instance claims them again meanwhile.
    func claimNotifications(now: Date, leaseUntil: Date, limit: Int) async throws -> [QueuedNotification]
    /// Records how the sends of claimed notifications ended, in one transaction.
    func finishNotifications(_ outcomes: [(QueuedNotification, NotificationOutcome)]) async throws
    /// The devices with a push token, not revoked and not `excluding`: of `space`'s members, or of `userID` when
    /// `space` is `nil`; at most `limit`.
    func alertTargets(userID: UUID, space: UUID?, excluding: UUID?, limit: Int) async throws -> [AlertTarget]
    /// Clears the device's push token if it is still `token` (APNs rejected it), and forgets its waiting notification.
    func clearPushToken(deviceID: UUID, token: String?) async throws
    /// Records that these devices hold an open stream until `until` (`nil`: no longer), so they are not woken.
    func markStreaming(deviceIDs: [UUID], until: Date?) async throws
}
