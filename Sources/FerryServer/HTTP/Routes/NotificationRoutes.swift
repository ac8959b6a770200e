import FerryCore
import Foundation
import Hummingbird

/// `POST /sync/v1/notifications`: an app's visible notification to the caller's other devices or a space's members.
struct NotificationRoutes {
    /// `nil` when the server has no APNs set up: the route then says so.
    let notifications: NotificationService?

    func register(on group: DeadlineGroup<AuthenticatedContext>) {
        let notifications = self.notifications
        group.post("notifications") { request, context in
            var request = request
            let body = try await request.decodeJSON(AlertRequest.self, limit: 16 * 1024)
            guard let notifications else {
                throw ServiceError(.invalidRequest, .notificationsDisabled,
                    "This server sends no push notifications: its operator has not set up APNs (ferry serve --apns-key-file, --apns-key-id, --apns-team-id, --apns-topic)."
                )
            }
            return JSONResponse(try await notifications.sendAlert(context.caller, body))
        }
    }
}
