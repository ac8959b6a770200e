import FerryClient
import FerryCore
import Testing

@Suite("AuthClient: state changes")
struct AuthStateTests {
    @Test("every subscriber gets the current state first, then each change")
    func multipleSubscribers() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let auth = server.makeClient(store: InMemorySessionStore(session))
        var first = auth.stateChanges().makeAsyncIterator()
        #expect(await first.next() == .signedIn(session.user))
        var second = auth.stateChanges().makeAsyncIterator()
        #expect(await second.next() == .signedIn(session.user))
        try await auth.signOut()
        #expect(await first.next() == .signedOut)
        #expect(await second.next() == .signedOut)
        let signedIn = try await auth.signIn(email: "ada@example.com", password: "correct horse")
        #expect(await first.next() == .signedIn(signedIn.user))
        var late = auth.stateChanges().makeAsyncIterator()
        #expect(await late.next() == .signedIn(signedIn.user))
    }

    @Test("nobody signed in: the first state is signedOut")
    func signedOutFirst() async {
        let auth = FakeAuthServer().makeClient()
        var states = auth.stateChanges().makeAsyncIterator()
        #expect(await states.next() == .signedOut)
    }
}
