import FerryClient
import FerryCore
import Foundation

/// A user signed in (or up) on a live server through the real client: the session, a sync client and an empty
/// in-memory store of the account. The end-to-end tests' devices start from one and add the engine they need.
struct SignedInAccount {
    let auth: AuthClient
    let client: SyncClient
    let store: LocalStore

    /// Signs in through `baseURL` (the server, or a proxy in front of it); `signUp` creates the account first.
    static func open(_ baseURL: URL, apiKey: String, email: String, password: String = "correct horse 1", signUp: Bool) async throws -> SignedInAccount {
        let auth = AuthClient(endpoint: ServerEndpoint(baseURL: baseURL, apiKey: apiKey), store: InMemorySessionStore())
        let session = signUp ? try await auth.signUp(email: email, password: password) : try await auth.signIn(email: email, password: password)
        let client = SyncClient(auth: auth)
        let store = try LocalStore.inMemory(schema: try await client.schema(), defaultSpace: session.user.id)
        return SignedInAccount(auth: auth, client: client, store: store)
    }
}
