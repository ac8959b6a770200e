import ArgumentParser
import FerryServer
import Foundation

/// `ferry serve`'s options for push notifications through APNs (token-based authentication).
struct NotificationOptions: ParsableArguments {
    @Option(name: .customLong("apns-key-file"), help: "The AuthKey_….p8 file from Apple (kept 0600). Turns notifications on, with the three below.")
    var keyFile: String?

    @Option(name: .customLong("apns-key-id"), help: "The key's 10-character id.")
    var keyID: String?

    @Option(name: .customLong("apns-team-id"), help: "The developer team's id.")
    var teamID: String?

    @Option(name: .customLong("apns-topic"), help: "The app's bundle id.")
    var topic: String?

    @Option(name: .customLong("apns-url"), help: "APNs for production tokens. [default: https://api.push.apple.com]")
    var productionURL: String?

    @Option(name: .customLong("apns-sandbox-url"), help: "APNs for development tokens. [default: https://api.sandbox.push.apple.com]")
    var sandboxURL: String?

    @Option(name: .customLong("apns-ca-file"), help: "A PEM file of certificates to trust beside the system's (a proxy in front of APNs, or tests).")
    var caFile: String?

    @Option(name: .customLong("apns-interval"), help: "Least seconds between two background notifications to one device. [default: 900]")
    var interval: Int?

    func apply(to configuration: inout ServerConfiguration, environment: [String: String]) throws {
        var settings = configuration.notifications
        settings.keyFile = keyFile ?? environment["FERRY_APNS_KEY_FILE"]
        settings.keyID = keyID ?? environment["FERRY_APNS_KEY_ID"]
        settings.teamID = teamID ?? environment["FERRY_APNS_TEAM_ID"]
        settings.topic = topic ?? environment["FERRY_APNS_TOPIC"]
        settings.caFile = caFile ?? environment["FERRY_APNS_CA_FILE"]
        if let url = productionURL ?? environment["FERRY_APNS_URL"] { settings.productionURL = try Self.https(url, flag: "--apns-url") }
        if let url = sandboxURL ?? environment["FERRY_APNS_SANDBOX_URL"] { settings.sandboxURL = try Self.https(url, flag: "--apns-sandbox-url") }
        if let seconds = try ServeSettings.seconds(interval, environment, "FERRY_APNS_INTERVAL", flag: "--apns-interval") {
            settings.minimumInterval = seconds
        }
        let given = [settings.keyFile, settings.keyID, settings.teamID, settings.topic].filter { !($0 ?? "").isEmpty }.count
        guard given == 0 || given == 4 else {
            throw CommandFailure(message: "notifications need all of --apns-key-file, --apns-key-id, --apns-team-id and --apns-topic", status: 64)
        }
        configuration.notifications = settings
    }

    private static func https(_ text: String, flag: String) throws -> String {
        guard let url = URL(string: text), url.scheme == "https", url.host != nil, url.path.isEmpty || url.path == "/" else {
            throw CommandFailure(message: "\(flag) must be an https URL with no path, such as https://api.push.apple.com, not '\(text)'", status: 64)
        }
        return text
    }
}
