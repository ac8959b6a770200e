import FerryClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("AuthClient: sign-up, sign-in, sign-out")
struct AuthClientSignInTests {
    @Test("sign-up sends the apikey and the metadata, and saves the session")
    func signUpSavesTheSession() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore()
        let auth = server.makeClient(store: store)
        let session = try await auth.signUp(email: "ada@example.com", password: "correct horse", data: ["plan": .string("free")])
        #expect(session.user.userMetadata.objectValue?["plan"] == .string("free"))
        #expect(store.load() == session)
        #expect(try await auth.session == session)
        let request = try #require(server.lastRequest(.signUp))
        #expect(request.value(forHTTPHeaderField: "apikey") == FakeAuthServer.apiKey)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test("sign-in saves the session; wrong credentials save nothing")
    func signIn() async throws {
        let server = FakeAuthServer()
        _ = server.issueSession(email: "ada@example.com", password: "correct horse")
        let store = InMemorySessionStore()
        let auth = server.makeClient(store: store)
        let error = await #expect(throws: RemoteError.self) { try await auth.signIn(email: "ada@example.com", password: "wrong") }
        #expect(error?.code == .invalidCredentials)
        #expect(error?.status == 400)
        #expect(store.load() == nil)
        let session = try await auth.signIn(email: "ada@example.com", password: "correct horse")
        #expect(store.load() == session)
    }

    @Test("429 maps to over_request_rate_limit with retryAfter")
    func rateLimited() async throws {
        let server = FakeAuthServer()
        server.fail(.signIn, with: .status(429, .overRequestRateLimit, retryAfter: 30))
        let auth = server.makeClient()
        let error = try #require(await #expect(throws: RemoteError.self) {
            try await auth.signIn(email: "ada@example.com", password: "correct horse")
        })
        #expect(error.code == .overRequestRateLimit)
        #expect(error.status == 429)
        #expect(error.retryAfter == .seconds(30))
        #expect(error.isRateLimited)
        #expect(!error.isOffline)
    }

    @Test("a 429 without a JSON body still maps to over_request_rate_limit")
    func rateLimitedWithoutBody() async throws {
        let server = FakeAuthServer()
        server.fail(.signIn, with: .raw(429, body: "slow down", headers: ["Retry-After": "7"]))
        let error = try #require(await #expect(throws: RemoteError.self) {
            try await server.makeClient().signIn(email: "ada@example.com", password: "x")
        })
        #expect(error.code == .overRequestRateLimit)
        #expect(error.retryAfter == .seconds(7))
    }

    @Test("signing out locally clears the session even when the server cannot be reached")
    func signOutOffline() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession())
        let auth = server.makeClient(store: store)
        server.fail(.logout, with: .network)
        let error = await #expect(throws: RemoteError.self) { try await auth.signOut(scope: .local) }
        #expect(error?.isOffline == true)
        #expect(store.load() == nil)
        #expect(try await auth.session == nil)
    }

    @Test("global sign-out tells the server the scope and clears the session")
    func signOutGlobal() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let store = InMemorySessionStore(session)
        let auth = server.makeClient(store: store)
        try await auth.signOut(scope: .global)
        let request = try #require(server.lastRequest(.logout))
        #expect(request.url?.query == "scope=global")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer \(session.accessToken)")
        #expect(store.load() == nil)
    }

    @Test("signing out the other sessions keeps this one")
    func signOutOthers() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let store = InMemorySessionStore(session)
        let auth = server.makeClient(store: store)
        try await auth.signOut(scope: .others)
        #expect(server.lastRequest(.logout)?.url?.query == "scope=others")
        #expect(store.load() == session)
        server.fail(.logout, with: .network)
        await #expect(throws: RemoteError.self) { try await auth.signOut(scope: .others) }
        #expect(store.load() == session)
    }

    @Test("a session the server already ended signs out without an error")
    func signOutOfAnEndedSession() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 10)
        server.revokeSessions(of: session.user.id)
        let store = InMemorySessionStore(session)
        try await server.makeClient(store: store).signOut()
        #expect(store.load() == nil)
    }
}
