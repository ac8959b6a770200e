import FerryClient
import FerryCore
import FerryTesting
import Foundation

/// One device: a fake server, a probe, and a session file and launch history in a temporary folder.
///
/// Each ``launch()`` builds a new ``AuthClient`` and ``LaunchRouter`` over the same files, as a new process would.
struct LaunchFixture {
    let server = FakeAuthServer()
    let probe = FakeProbe()
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    var store: FileSessionStore { FileSessionStore(fileURL: folder.url.appending(path: "session.json")) }
    var history: FileLaunchHistory { FileLaunchHistory(folder: folder.url.appending(path: "launch")) }

    /// A fresh process: a new client and router over this device's files.
    func makeRouter() -> (router: LaunchRouter, auth: AuthClient) {
        let auth = server.makeClient(store: store)
        let router = LaunchRouter(
            probe: probe, auth: auth, profiles: ProfileClient(auth: auth), history: history,
            logger: FakeAuthServer.quietLogger
        )
        return (router, auth)
    }

    /// A cold launch in a fresh process.
    func launch() async -> LaunchDecision {
        await makeRouter().router.coldLaunch()
    }

    /// Saves a session for a (new) user whose access token expires in `expiresIn` seconds, with `profile`.
    @discardableResult
    func signedIn(expiresIn: Int = 3600, profile: [String: JSONValue]? = FakeAuthServer.completeProfile) throws -> AuthSession {
        let session = server.issueSession(expiresIn: expiresIn)
        server.setProfile(profile, for: session.user.id)
        try store.save(session)
        try history.recordLaunch()
        return session
    }

    func remove() { folder.remove() }
}
