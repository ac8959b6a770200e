import FerryCore
import Hummingbird
import NIOCore

/// The context of an authenticated route: the parent's, plus the caller ``Authenticator`` verified.
struct AuthenticatedContext: ChildRequestContext, FerryChanneledContext {
    typealias ParentContext = FerryRequestContext
    var coreContext: CoreRequestContextStorage
    /// The verified caller: account, session and bound device.
    let caller: SyncCaller
    /// The connection (``FerryRequestContext/channel``).
    let channel: any Channel

    init(context: FerryRequestContext) throws {
        guard let caller = context.caller else {
            // Only reachable when a group forgets the ``Authenticator``: refuse rather than serve anonymously.
            throw APIError(.unauthorized, .noAuthorization, "This endpoint requires a valid Bearer token")
        }
        self.coreContext = context.coreContext
        self.caller = caller
        self.channel = context.channel
    }
}
