import FerryClient
import FerryCore
import Foundation
import Testing

@Suite("LaunchRouter")
struct LaunchRouterTests {
    @Test("expired access token and a valid refresh token: refreshed, then main")
    func expiredAccessToken() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn(expiresIn: -600)
        let decision = await device.launch()
        #expect(decision.route == .main)
        #expect(decision.reason == "Signed in as ada@example.com with a complete profile.")
        #expect(device.server.count(.refresh) == 1)
        #expect(try device.store.load()?.refreshToken != session.refreshToken)
    }

    @Test("a network failure during the profile check: offline, session kept")
    func profileCheckOffline() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn()
        device.server.fail(.profile, with: .network)
        let decision = await device.launch()
        #expect(decision.route.isOffline)
        #expect(try device.store.load() == session)
        device.server.fail(.profile, with: nil)
        #expect(await device.launch().route == .main)
    }

    @Test("a network failure during the refresh: offline, session file unchanged")
    func refreshOffline() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        try device.signedIn(expiresIn: 5)
        let before = try Data(contentsOf: device.store.fileURL)
        device.server.fail(.refresh, with: .timeout)
        let decision = await device.launch()
        #expect(decision.route == .offline(reason: "session not confirmed"))
        #expect(try Data(contentsOf: device.store.fileURL) == before)
    }

    @Test("a 5xx from the profile route is offline, not sign-in")
    func profileServerError() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        try device.signedIn()
        device.server.fail(.profile, with: .status(503, .unavailable))
        #expect(await device.launch().route.isOffline)
        #expect(try device.store.load() != nil)
    }

    @Test("signed out after signing out: sign-in, not the welcome screens")
    func returningUser() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        try device.signedIn()
        #expect(await device.launch().route == .main)
        let (router, auth) = device.makeRouter()
        try await auth.signOut()
        #expect(await router.coldLaunch().route == .signIn)
    }

    @Test("an offline first launch is not recorded: the next launch still shows the welcome screens")
    func offlineFirstLaunch() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        device.probe.answer(.unreachable(reason: "no network"))
        #expect(await device.launch().route == .offline(reason: "no network"))
        #expect(!device.history.hasLaunchedBefore)
        device.probe.answer(.reachable)
        #expect(await device.launch().route == .welcome)
    }

    @Test("a warm launch only re-checks connectivity")
    func warmLaunch() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        let session = try device.signedIn(expiresIn: 5)
        let (router, _) = device.makeRouter()
        #expect(await router.warmLaunch() == .reachable)
        device.probe.answer(.unreachable(reason: "no network"))
        #expect(await router.warmLaunch() == .unreachable(reason: "no network"))
        #expect(device.probe.checks == 2)
        #expect(device.server.totalRequests == 0)
        #expect(try device.store.load() == session)
    }

    @Test("debug reset forgets the history and the session, even with the server down")
    func debugReset() async throws {
        let device = try LaunchFixture()
        defer { device.remove() }
        try device.signedIn()
        device.server.fail(.logout, with: .network)
        let (router, _) = device.makeRouter()
        try await router.debugReset()
        #expect(device.server.count(.logout) == 1)
        #expect(!device.history.hasLaunchedBefore)
        #expect(try device.store.load() == nil)
        #expect(await device.launch().route == .welcome)
    }
}
