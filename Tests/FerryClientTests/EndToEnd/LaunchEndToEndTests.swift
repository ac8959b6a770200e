import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The language-learning app's launch flows and edge cases against a real server on each engine, through the real
/// AuthClient, ProfileClient, HealthProbe and file-backed session store and launch history.
@Suite("Launch, end to end")
struct LaunchEndToEndTests {
    static var lingo: String {
        get throws { try ExampleSchemas.text("lingo.yaml") }
    }

    /// One app install: its own folder (session file, launch history) talking to `server`.
    struct Device {
        let folder: URL
        let auth: AuthClient
        let router: LaunchRouter
        let profiles: ProfileClient

        init(server: LiveServer, folder: URL) {
            self.folder = folder
            let endpoint = ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey)
            auth = AuthClient(endpoint: endpoint, store: FileSessionStore(fileURL: folder.appending(path: "session.json")))
            profiles = ProfileClient(auth: auth)
            router = LaunchRouter(
                probe: HealthProbe(server: server.baseURL, timeout: .seconds(60)), auth: auth, profiles: profiles,  // a hang detector only
                history: FileLaunchHistory(folder: folder)
            )
        }

        func route() async -> LaunchRoute { await router.coldLaunch().route }
    }

    static func fastHashing(_ configuration: inout ServerConfiguration) {
        configuration.useFastPasswordHashing()
    }

    static let completeProfile: [String: JSONValue] = [
        "first_name": .string("Ada"), "native_language": .string("en"), "learning_languages": .array([.string("fr")]),
    ]

    @Test("first launch → welcome; returning signed-out → signIn; sign-up then quit during onboarding → onboarding; complete → main",
          arguments: TestEngine.available)
    func routes(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.lingo, configure: Self.fastHashing) { server in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let device = Device(server: server, folder: folder.url)
            #expect(await device.route() == .welcome)
            #expect(await device.route() == .signIn)
            _ = try await device.auth.signUp(email: uniqueEmail("lingo"), password: "correct horse 1")
            _ = try await device.profiles.update(fields: ["first_name": .string("Ada")])
            // The app is killed during onboarding; the next launch resumes it.
            let relaunched = Device(server: server, folder: folder.url)
            #expect(await relaunched.route() == .onboarding(missing: ["native_language", "learning_languages"]))
            _ = try await relaunched.profiles.update(fields: Self.completeProfile)
            #expect(await relaunched.route() == .main)
            let warm = await relaunched.router.warmLaunch()
            #expect(warm == .reachable)
        }
    }

    @Test("a schema that requires no profile fields sends a signed-in user to main, profile record or not", arguments: TestEngine.available)
    func noProfileFields(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: Self.fastHashing) { server in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let device = Device(server: server, folder: folder.url)
            _ = try await device.auth.signUp(email: uniqueEmail("lingo"), password: "correct horse 1")
            let profile = try await device.profiles.profile()
            #expect(profile.missing.isEmpty && profile.isComplete, "\(profile)")
            #expect(await device.route() == .main)
        }
    }

    @Test("edge cases: reinstall, revoked access, server down at launch, profile deleted server-side", arguments: TestEngine.available)
    func edgeCases(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let configuration = database.endToEndConfiguration(schemaFile: ExampleSchemas.path("lingo.yaml"))
            var server = try await LiveServer.start(configuration)
            let port = try #require(server.baseURL.port)
            let phoneFolder = try TemporaryFolder(), macFolder = try TemporaryFolder()
            defer { phoneFolder.remove(); macFolder.remove() }
            let email = uniqueEmail("lingo")

            let phone = Device(server: server, folder: phoneFolder.url)
            let session = try await phone.auth.signUp(email: email, password: "correct horse 1")
            _ = try await phone.profiles.update(fields: Self.completeProfile)
            #expect(await phone.route() == .main)

            // Reinstall: the session and launch history are gone with the app's folder.
            try FileManager.default.removeItem(at: phoneFolder.url)
            try FileManager.default.createDirectory(at: phoneFolder.url, withIntermediateDirectories: true)
            let reinstalled = Device(server: server, folder: phoneFolder.url)
            #expect(await reinstalled.route() == .welcome)
            _ = try await reinstalled.auth.signIn(email: email, password: "correct horse 1")
            #expect(await reinstalled.route() == .main, "a returning user with a complete profile skips onboarding")

            // Server down at launch: offline with the session kept, and main once it is back, without a password.
            await server.stop()
            guard case .offline = await reinstalled.route() else {
                Issue.record("expected offline while the server is down")
                return
            }
            #expect(try await reinstalled.auth.session != nil)
            server = try await LiveServer.start(configuration, port: port)
            #expect(await reinstalled.route() == .main)

            // Profile deleted server-side: back to onboarding to rebuild it.
            try await server.server.storage.deleteProfile(userID: session.user.id, now: Date())
            #expect(await reinstalled.route() == .onboarding(missing: ["first_name", "native_language", "learning_languages"]))
            _ = try await reinstalled.profiles.update(fields: Self.completeProfile)

            // Revoked access: another device signs out everywhere; the next launch refreshes, is told the session is gone.
            let mac = Device(server: server, folder: macFolder.url)
            _ = try await mac.auth.signIn(email: email, password: "correct horse 1")
            try await mac.auth.signOut(scope: .global)
            #expect(await reinstalled.route() == .signIn)
            #expect(try await reinstalled.auth.session == nil, "only the server's explicit answer removed the session")
            await server.stop()
        }
    }

    @Test("an expired access token is refreshed at launch by ONE request, however many callers ask", arguments: TestEngine.available)
    func singleFlightRefresh(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.lingo, configure: { configuration in
            Self.fastHashing(&configuration)
            configuration.auth.accessTokenLifetime = .seconds(20)  // inside the 30 s margin: every token counts as expiring
        }) { server in
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let device = Device(server: server, folder: folder.url)
            let first = try await device.auth.signUp(email: uniqueEmail("lingo"), password: "correct horse 1")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await device.auth.accessToken() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            // One token for all fifty. It may be the first one's text: claims in whole seconds make a token refreshed
            // within the second it was issued the same; the metric and the rotated refresh token show the refresh.
            #expect(tokens.count == 1)
            let metrics = try String(decoding: await URLSession.shared.data(from: server.url("/metrics")).0, as: UTF8.self)
            #expect(metrics.contains(#"ferry_http_requests_total{method="POST",route="/auth/v1/token",status="200"} 1"#),
                    "exactly one refresh reached the server")
            #expect(try await device.auth.session?.refreshToken != first.refreshToken)
        }
    }
}
