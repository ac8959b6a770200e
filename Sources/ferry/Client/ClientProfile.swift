import FerryClient
import FerryCore
import FerrySecurity
import Foundation

/// One profile's folder: `<home>/profiles/<name>/` with its server settings, session and launch history.
struct ClientProfile {
    struct Settings: Codable {
        var server: String
        var apiKey: String

        enum CodingKeys: String, CodingKey {
            case server
            case apiKey = "api_key"
        }
    }

    let folder: URL
    let settings: Settings
    let options: ClientOptions

    /// Opens the profile, taking the server and key from the options, the environment or the profile's settings
    /// (in that order) and remembering them.
    init(_ options: ClientOptions) throws {
        let name = options.profileName
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw CommandFailure(message: "a profile name uses letters, digits, '-' and '_' only, not '\(name)'", status: 64)
        }
        folder = options.homeFolder.appending(path: "profiles/\(name)")
        self.options = options
        let settingsFile = folder.appending(path: "config.json")
        let stored = (try? Data(contentsOf: settingsFile)).flatMap { try? JSONDecoder().decode(Settings.self, from: $0) }
        let server = options.server ?? options.environment["FERRY_SERVER"] ?? stored?.server
        let apiKey = options.apiKey ?? options.environment["FERRY_API_KEY"] ?? stored?.apiKey
        guard let server, !server.isEmpty else {
            throw CommandFailure(message: "no server for profile '\(name)': pass --server URL (or set FERRY_SERVER)", status: 64)
        }
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host() != nil else {
            throw CommandFailure(message: "'\(server)' is not an http(s) URL", status: 64)
        }
        guard let apiKey, !apiKey.isEmpty else {
            throw CommandFailure(message: "no API key for profile '\(name)': pass --api-key (the server shows it with 'ferry serve --print-keys')", status: 64)
        }
        settings = Settings(server: server, apiKey: apiKey)
        if let stored, Self.serverIdentity(stored.server) != Self.serverIdentity(server) {
            // A session belongs to the server that issued it; never send its refresh token to another.
            let session = folder.appending(path: "session.json")
            if FileManager.default.fileExists(atPath: session.path()) {
                try? FileManager.default.removeItem(at: session)
                FileHandle.standardError.write(Data(
                    "ferry: profile '\(name)' moved from \(stored.server) to \(server); its session belonged to the old server, so it is signed out here (run 'ferry login EMAIL --profile \(name)')\n".utf8
                ))
            }
        }
        if stored?.server != server || stored?.apiKey != apiKey {
            try OwnerOnlyPath.folder(folder.path())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try OwnerOnlyFile.write(try encoder.encode(settings), to: settingsFile)
        }
    }

    /// What tells servers apart: scheme, host and port, case-folded, with the scheme's default port, no trailing
    /// slash, and every loopback spelling (`localhost`, `127.0.0.1`, `[::1]`) as one, so `http://localhost:8080/`
    /// and `http://127.0.0.1:8080` are the same server.
    static func serverIdentity(_ text: String) -> String {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), var host = url.host()?.lowercased() else { return text }
        if ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host) { host = "loopback" }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        var path = url.path()
        while path.hasSuffix("/") { path.removeLast() }
        return "\(scheme)://\(host):\(port)\(path)"
    }

    var endpoint: ServerEndpoint {
        ServerEndpoint(baseURL: URL(string: settings.server)!, apiKey: settings.apiKey)
    }

    func makeAuthClient() -> AuthClient {
        AuthClient(endpoint: endpoint, store: FileSessionStore(fileURL: folder.appending(path: "session.json")), transport: transport)
    }

    /// The system's trust, plus `--ca-file`'s on Linux (on macOS the keychain's trust settings do that).
    private var transport: any HTTPTransport {
        #if os(Linux)
        HTTPClientTransport(trustRootsFile: options.trustRootsFile)
        #else
        DefaultHTTPTransport()
        #endif
    }
}
