import FerryClient
import FerryCore
import Foundation

/// Runs the post-login sync after `signup` and `login`: a progress bar on a terminal, then a summary of anything
/// skipped. A profile that cannot open its store (no schema yet, another account's data) skips it with a note.
enum PostLoginReport {
    static func run(_ profile: ClientProfile, auth: AuthClient, options: ClientOptions) async -> PostLoginSyncResult? {
        let client = SyncClient(auth: auth)
        let store: LocalStore
        let postLogin: PostLoginSync
        do {
            store = try profile.openStore()
            let keys = try profile.deviceKeys()
            postLogin = PostLoginSync(store: store, remote: client, deviceKeys: keys, device: profile.deviceRegistration(keys: keys))
        } catch {
            let reason = (error as? CommandFailure)?.message ?? "\(error)"
            let hint = (error as? StoreError)?.code == .schemaOutdated
                ? " This profile's store was made for another schema: run 'ferry reset' (with the same --profile) to start it over, then sign in again."
                : ""
            note("ferry: skipped the post-login sync: \(reason)\(hint)")
            return nil
        }
        let bar = !options.json && isatty(STDERR_FILENO) == 1
        let updates = postLogin.progressUpdates()
        let shown = Task {
            for await step in updates where bar {
                let width = 24, filled = Int(step.fractionCompleted * Double(width))
                let line = "[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(Int(step.fractionCompleted * 100))% \(step.message)"
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            }
        }
        let result = await postLogin.run()
        await shown.value
        if bar { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if !options.json {
            for item in result.skipped {
                note("ferry: skipped \(item.item) (\(item.phase.rawValue)): \(item.message) [\(item.code)]")
            }
            if let failure = result.failure {
                note("ferry: the post-login sync stopped while \(failure.phase.rawValue): \(failure.message) [\(failure.code)]; you can continue, and 'ferry sync' retries")
            }
            if let device = result.device, device.trust == .pending {
                // Trust matters only for end-to-end encrypted spaces: say so only when the account has one.
                let encrypted = (try? await client.spaces())?.filter(\.isEncrypted).count ?? 0
                if encrypted > 0 {
                    note("ferry: this device is pending: run 'ferry devices trust \(device.id.lowercasedText)' on a trusted device to read the account's \(encrypted) encrypted space(s)")
                }
            }
        }
        return result
    }

    /// The JSON summary `signup` and `login` add to their output.
    static func object(_ result: PostLoginSyncResult?) -> JSONValue? {
        guard let result else { return nil }
        var object: [String: any JSONOutput] = [
            "pushed": result.pushed, "pulled": result.pulled, "applied": result.applied, "sealed_keys": result.sealedKeys,
            "skipped": result.skipped.map { ["phase": $0.phase.rawValue, "item": $0.item, "code": $0.code, "message": $0.message] },
        ]
        if let device = result.device {
            object["device_id"] = device.id.lowercasedText
            object["device_trust"] = device.trust.rawValue
        }
        if let failure = result.failure {
            object["failure"] = ["phase": failure.phase.rawValue, "code": failure.code, "message": failure.message]
        }
        return .members(object)
    }

    private static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
