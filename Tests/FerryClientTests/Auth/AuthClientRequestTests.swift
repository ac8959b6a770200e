import FerryClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("AuthClient: authorized requests")
struct AuthClientRequestTests {
    @Test("authorized requests carry the apikey and the bearer token")
    func headers() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let auth = server.makeClient(store: InMemorySessionStore(session))
        let user = try await auth.user()
        #expect(user == session.user)
        let request = try #require(server.lastRequest(.user))
        #expect(request.value(forHTTPHeaderField: "apikey") == FakeAuthServer.apiKey)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer \(session.accessToken)")
    }

    @Test("on 401 bad_jwt the session is refreshed once and the request sent again")
    func refreshOnBadJWT() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession())
        let auth = server.makeClient(store: store)
        server.expireAccessTokens()   // the server rejects a token the client still thinks is fresh
        let user = try await auth.user()
        #expect(user.email == "ada@example.com")
        #expect(server.count(.user) == 2)
        #expect(server.count(.refresh) == 1)
        #expect(server.lastRequest(.user)?.value(forHTTPHeaderField: "Authorization") == "Bearer \(store.load()!.accessToken)")
    }

    @Test("a second 401 after the refresh is thrown, not retried again")
    func onlyOneRetry() async throws {
        let server = FakeAuthServer()
        let auth = server.makeClient(store: InMemorySessionStore(server.issueSession()))
        server.fail(.user, with: .status(401, .badJWT))
        let error = await #expect(throws: RemoteError.self) { try await auth.user() }
        #expect(error?.code == .badJWT)
        #expect(server.count(.user) == 2)
        #expect(server.count(.refresh) == 1)
        #expect(try await auth.session != nil)
    }

    @Test("a session-gone answer to an authorized request deletes the session")
    func sessionGoneOnRequest() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession())
        let auth = server.makeClient(store: store)
        server.fail(.user, with: .status(403, .sessionNotFound))
        let error = await #expect(throws: AuthError.self) { try await auth.user() }
        #expect(error?.isSessionGone == true)
        #expect(store.load() == nil)
    }

    @Test("a network failure on an authorized request keeps the session and reports offline")
    func offlineRequestKeepsSession() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let store = InMemorySessionStore(session)
        let auth = server.makeClient(store: store)
        server.fail(.user, with: .timeout)
        let error = await #expect(throws: RemoteError.self) { try await auth.user() }
        #expect(error?.code == .requestTimedOut)
        #expect(store.load() == session)
        var states = auth.stateChanges().makeAsyncIterator()
        #expect(await states.next() == .offline(session.user))
        server.fail(.user, with: nil)
        _ = try await auth.user()
        #expect(await states.next() == .signedIn(session.user))
    }

    @Test("updating the user saves the new metadata in the session")
    func updateUser() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession())
        let auth = server.makeClient(store: store)
        let user = try await auth.updateUser(data: ["theme": .string("dark")])
        #expect(user.userMetadata.objectValue?["theme"] == .string("dark"))
        #expect(store.load()?.user == user)
        let body = try #require(server.lastRequest(.updateUser)?.httpBody)
        #expect(try JSONDecoder().decode([String: JSONValue].self, from: body) == ["data": .object(["theme": .string("dark")])])
    }

    @Test("a 2xx body that is not the documented JSON is unexpected_response")
    func unreadableAnswer() async throws {
        let server = FakeAuthServer()
        server.fail(.signIn, with: .raw(200, body: "<html>captive portal</html>"))
        let error = await #expect(throws: RemoteError.self) {
            try await server.makeClient().signIn(email: "ada@example.com", password: "x")
        }
        #expect(error?.code == .unexpectedResponse)
    }
}
