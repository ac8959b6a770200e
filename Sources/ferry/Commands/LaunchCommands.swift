import ArgumentParser
import FerryClient
import FerryCore
import Foundation

extension ClientProfile {
    /// How long the launch probe waits for `/health`: `FERRY_PROBE_TIMEOUT` seconds, 3 by default.
    var probeTimeout: Duration {
        let seconds = options.environment["FERRY_PROBE_TIMEOUT"].flatMap(Double.init).flatMap { $0 > 0 && $0 <= 300 ? $0 : nil } ?? 3
        return .milliseconds(Int(seconds * 1000))
    }

    func makeLaunchRouter(auth: AuthClient) -> LaunchRouter {
        LaunchRouter(
            probe: HealthProbe(server: endpoint.baseURL, timeout: probeTimeout), auth: auth,
            profiles: ProfileClient(auth: auth), history: FileLaunchHistory(folder: folder)
        )
    }
}

/// `ferry status`: where a cold launch of this profile would go, and why.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show where a cold launch goes (offline, welcome, signIn, onboarding, main) and why."
    )

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let profile = try ClientProfile(options)
        let auth = profile.makeAuthClient()
        let decision = await profile.makeLaunchRouter(auth: auth).coldLaunch()
        let user = try? await auth.session?.user
        let (name, missing): (String, [String]?) = switch decision.route {
        case .offline: ("offline", nil)
        case .welcome: ("welcome", nil)
        case .signIn: ("signIn", nil)
        case .onboarding(let fields): ("onboarding", fields)
        case .main: ("main", nil)
        }
        Output.emit(json: options.json, human: "\(name): \(decision.reason)", [
            "route": name, "reason": decision.reason, "missing": missing, "email": user?.email,
        ])
    }
}

/// `ferry profile set FIELD=VALUE…`: writes fields of the signed-in user's profile.
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "Read or change the signed-in user's profile.", subcommands: [Set.self, Show.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set profile fields.",
            discussion: "VALUE is read as JSON when it parses (42, true, [\"fr\",\"de\"], null), else as text."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "FIELD=VALUE pairs, at least one.") var assignments: [String] = []

        func run() async throws {
            guard !assignments.isEmpty else {
                throw CommandFailure(message: "name at least one field to set: ferry profile set FIELD=VALUE [FIELD=VALUE ...]", status: 64)
            }
            let fields = try RecordText.parseAssignments(assignments)
            let auth = try ClientProfile(options).makeAuthClient()
            let state = try await ProfileClient(auth: auth).update(fields: fields)
            printState(state, json: options.json)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the profile and what it lacks.")

        @OptionGroup var options: ClientOptions

        func run() async throws {
            let auth = try ClientProfile(options).makeAuthClient()
            printState(try await ProfileClient(auth: auth).profile(), json: options.json)
        }
    }

    static func printState(_ state: ProfileState, json: Bool) {
        let fields = (state.fields ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.jsonText)" }
        let set = fields.isEmpty ? "" : ": \(fields.joined(separator: " "))"
        let human = state.isComplete
            ? (fields.isEmpty ? "Profile complete (the schema requires no profile fields)." : "Profile complete\(set)")
            : "Profile incomplete (missing \(state.missing.joined(separator: ", ")))\(set); set them with 'ferry profile set FIELD=VALUE …'."
        Output.emit(json: json, human: human, ["profile": state.encodedJSON])
    }
}

/// `ferry reset`: the debug reset — forgets this profile's launch history and signs it out.
struct ResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reset", abstract: "Debug reset: clear local state (launch history, local data) and sign out.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let profile = try ClientProfile(options)
        let auth = profile.makeAuthClient()
        try await profile.makeLaunchRouter(auth: auth).debugReset()
        profile.removeLocalData()
        Output.emit(json: options.json, human: "Reset: signed out, the next launch starts as a first launch.", ["reset": true])
    }
}
