import FerryClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("ProfileClient")
struct ProfileClientTests {
    @Test("reads and patches /sync/v1/profile with the apikey and the bearer token")
    func readAndUpdate() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession()
        let profiles = ProfileClient(auth: server.makeClient(store: InMemorySessionStore(session)))
        let empty = try await profiles.profile()
        #expect(empty.fields == nil)
        #expect(empty.missing == FakeAuthServer.requiredFields)
        let updated = try await profiles.update(fields: FakeAuthServer.completeProfile)
        #expect(updated.isComplete)
        #expect(try await profiles.profile() == updated)
        let request = try #require(server.lastRequest(.updateProfile))
        #expect(request.url?.absoluteString == "https://ferry.test/base/sync/v1/profile")
        #expect(request.value(forHTTPHeaderField: "apikey") == FakeAuthServer.apiKey)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer \(session.accessToken)")
        let body = try JSONDecoder().decode([String: JSONValue].self, from: try #require(request.httpBody))
        #expect(body == ["fields": .object(FakeAuthServer.completeProfile)])
    }

    @Test("without a session the profile cannot be read")
    func notSignedIn() async throws {
        let profiles = ProfileClient(auth: FakeAuthServer().makeClient())
        let error = await #expect(throws: AuthError.self) { try await profiles.profile() }
        #expect(error?.isSessionGone == true)
    }
}
