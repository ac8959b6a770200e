import ArgumentParser
import Foundation

/// Options every client command takes; each also comes from the environment.
struct ClientOptions: ParsableArguments {
    @Option(help: "The Ferry server's URL (FERRY_SERVER); remembered by the profile.")
    var server: String?

    @Option(name: .customLong("api-key"), help: "The server's anon key (FERRY_API_KEY; 'ferry serve --print-keys' shows it); remembered by the profile.")
    var apiKey: String?

    @Option(help: "Ferry's folder on this machine (FERRY_HOME). [default: ~/.ferry]")
    var home: String?

    @Option(help: "The profile: one device, with its own session, keys and local data (FERRY_PROFILE). [default: default]")
    var profile: String?

    @Option(name: .customLong("ca-file"), help: "A PEM file of certificates to trust beside the system's, for a server behind a private CA (FERRY_CA_FILE).")
    var caFile: String?

    @Flag(help: "Print machine-readable JSON.")
    var json = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var homeFolder: URL {
        if let home = home ?? environment["FERRY_HOME"], !home.isEmpty { return URL(filePath: home) }
        return FileManager.default.homeDirectoryForCurrentUser.appending(path: ".ferry")
    }

    /// The private CA to trust, from the option or the environment.
    var trustRootsFile: String? {
        caFile ?? environment["FERRY_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var profileName: String {
        profile ?? environment["FERRY_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
    }
}
