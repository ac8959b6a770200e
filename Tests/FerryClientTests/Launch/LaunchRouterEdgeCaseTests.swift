import FerryClient
import FerryCore
import Foundation
import Testing

/// The seed app's edge-case table, one test per row.
@Suite("LaunchRouter: the seed's edge cases")
struct LaunchRouterEdgeCaseTests {
    @Test("reinstall: no session and a fresh history show the welcome screens, once")
    func reinstall() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        #expect(await device.launch().route == .welcome)
        #expect(device.history.hasLaunchedBefore)
        #expect(await device.launch().route == .signIn)
    }

    @Test("revoked access: the refresh answers session-gone, so sign-in, and the session is deleted")
    func revokedAccess() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn(expiresIn: 10)
        device.server.revokeSessions(of: session.user.id)
        let decision = await device.launch()
        #expect(decision.route == .signIn)
        #expect(decision.reason == "The server ended the session; sign in again.")
        #expect(try device.store.load() == nil)
        #expect(device.server.count(.refresh) == 1)
    }

    @Test("revoked while the access token still looks fresh: the profile check ends in sign-in")
    func revokedWithFreshToken() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn()
        device.server.revokeSessions(of: session.user.id)
        #expect(await device.launch().route == .signIn)
        #expect(try device.store.load() == nil)
    }

    @Test("server down at launch: offline with a reason, and the session is not touched")
    func serverDown() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn(expiresIn: 10)
        let before = try Data(contentsOf: device.store.fileURL)
        device.probe.answer(.unreachable(reason: "connection refused"))
        let decision = await device.launch()
        #expect(decision.route == .offline(reason: "connection refused"))
        #expect(decision.reason.contains("unreachable"))
        #expect(device.server.totalRequests == 0)
        #expect(try Data(contentsOf: device.store.fileURL) == before)
        #expect(try device.store.load() == session)
    }

    @Test("profile deleted server-side: onboarding to rebuild it")
    func profileDeleted() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn()
        #expect(await device.launch().route == .main)
        device.server.setProfile(nil, for: session.user.id)
        let decision = await device.launch()
        #expect(decision.route == .onboarding(missing: FakeAuthServer.requiredFields))
        #expect(decision.reason == "Signed in as ada@example.com, who has no profile yet (it needs first_name, native_language, learning_languages).")
    }

    @Test("signed up but quit during onboarding: onboarding again on the next launch")
    func quitDuringOnboarding() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        #expect(await device.launch().route == .welcome)
        let (_, auth) = device.makeRouter()
        try await auth.signUp(email: "ada@example.com", password: "correct horse")
        try await ProfileClient(auth: auth).update(fields: ["first_name": .string("Ada")])
        // The app is killed here; the next launch is a new process over the same files.
        let decision = await device.launch()
        #expect(decision.route == .onboarding(missing: ["native_language", "learning_languages"]))
        #expect(decision.reason == "Signed in as ada@example.com, whose profile lacks native_language, learning_languages.")
    }
}
