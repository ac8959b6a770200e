import FerryCore
import Foundation
import Hummingbird

/// `/sync/v1/profile`: the account's profile record.
struct ProfileRoutes {
    let auth: AuthService

    struct ProfileUpdate: Decodable, Sendable {
        var fields: [String: JSONValue]
    }

    func register(on group: DeadlineGroup<AuthenticatedContext>) {
        let auth = self.auth
        group.get("profile") { _, context in
            JSONResponse(try await auth.profile(context.caller.account))
        }
        group.patch("profile") { request, context in
            var request = request
            let body = try await request.decodeJSON(ProfileUpdate.self)
            return JSONResponse(try await auth.updateProfile(context.caller.account, fields: body.fields))
        }
    }
}
