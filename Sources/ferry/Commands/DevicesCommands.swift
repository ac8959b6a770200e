import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry devices ls|trust|revoke|rename|push-token`: this account's devices and their trust (these need the server).
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List, trust, revoke and rename this account's devices; register this one's push token.",
        subcommands: [List.self, Trust.self, Revoke.self, Rename.self, PushToken.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the account's devices.")

        @OptionGroup var options: ClientOptions

        func run() async throws {
            let devices = try await SyncClient(auth: try ClientProfile(options).makeAuthClient()).devices()
            let lines = devices.map { device in
                "\(RecordText.id(device.id))  \(device.trust.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(device.type.rawValue)  "
                    + "\(device.name)  last seen \(Timestamp.format(device.lastSeenAt))\(device.pushToken == nil ? "" : "  push: \((device.pushEnvironment ?? .production).rawValue)")"
                    + (device.isCurrent ? "  (this device)" : "")
            }
            Output.emit(json: options.json, human: lines.isEmpty ? "No devices registered yet: 'ferry login' registers this one." : lines.joined(separator: "\n"), [
                "devices": devices.map(DevicesCommand.object),
            ])
        }
    }

    struct Trust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust", abstract: "Approve a pending device, then hand it the keys of your encrypted spaces (run on a trusted device)."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The device's id (see 'ferry devices ls').") var id: String

        func run() async throws {
            try await DevicesCommand.change(id, options, { try await $0.trustDevice($1) }) { device, report in
                "Trusted \(device.name); shared \(report.sealedKeys) key(s)."
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a device: its sessions end and your encrypted spaces get new keys it cannot read."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The device's id (see 'ferry devices ls').") var id: String

        func run() async throws {
            // Rotating the keys it held is this device's job, in the sync that follows: the next key version is
            // sealed to every remaining trusted device, never to the revoked one.
            try await DevicesCommand.change(id, options, { try await $0.revokeDevice($1) }) { device, report in
                "Revoked \(device.name); sealed \(report.sealedKeys) new key(s)."
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename this device.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The new name (1–100 characters).") var name: String

        func run() async throws {
            let profile = try ClientProfile(options)
            let store = try profile.openStore()
            let keys = try profile.deviceKeys()
            let client = SyncClient(auth: profile.makeAuthClient())
            let device = try await client.registerDevice(store.deviceId, profile.deviceRegistration(name: name, keys: keys), keys: keys)
            Output.emit(json: options.json, human: "This device is now '\(device.name)'.", ["device": DevicesCommand.object(device)])
        }
    }

    /// Trusts or revokes a device, then syncs once so the keys follow (sealed to it, or rotated away from it).
    static func change(
        _ id: String, _ options: ClientOptions, _ action: (SyncClient, UUID) async throws -> Device,
        human: (Device, SyncReport) -> String
    ) async throws {
        let deviceID = try RecordText.uuid(id, what: "the device id")
        let profile = try ClientProfile(options)
        let client = SyncClient(auth: profile.makeAuthClient())
        let device = try await action(client, deviceID)
        let report = try await SyncCommand.syncOnce(profile, client: client)
        Output.emit(json: options.json, human: human(device, report), ["device": object(device), "sealed_keys": report.sealedKeys])
    }

    static func object(_ device: Device) -> JSONValue {
        .members([
            "id": RecordText.id(device.id), "name": device.name, "type": device.type.rawValue, "hostname": device.hostname,
            "trust": device.trust.rawValue, "public_key": device.publicKey, "last_seen_at": Timestamp.format(device.lastSeenAt),
            "created_at": Timestamp.format(device.createdAt), "current": device.isCurrent,
            "push_token": device.pushToken.map(JSONValue.string) ?? .null, "push_environment": device.pushEnvironment.map { JSONValue.string($0.rawValue) } ?? .null,
        ])
    }
}

extension DevicesCommand {
    /// `ferry devices push-token TOKEN --environment sandbox|production` (or `--clear`): what an app does with the token
    /// `didRegisterForRemoteNotificationsWithDeviceToken` hands it.
    struct PushToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "push-token", abstract: "Register this device's APNs token (hexadecimal), so the server wakes it after other devices write."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The token as hexadecimal text (64 characters today).") var token: String?
        @Option(help: "Which APNs the token is for: sandbox (development builds) or production.") var environment: PushEnvironment = .production
        @Flag(help: "Forget this device's token instead: the server stops waking it.") var clear = false

        func validate() throws {
            guard clear == (token == nil) else { throw ValidationError("Give a token, or --clear, not both.") }
        }

        func run() async throws {
            let profile = try ClientProfile(options)
            let store = try profile.openStore()
            let client = SyncClient(auth: profile.makeAuthClient())
            let device: Device
            if let token {
                guard token.count.isMultiple(of: 2), let bytes = Data(hexadecimal: token) else {
                    throw CommandFailure(message: "The token is hexadecimal text (0-9, a-f), an even number of characters; '\(token.prefix(80))' is not.", status: 64)
                }
                device = try await client.registerPushToken(bytes, environment: environment, device: store.deviceId)
            } else {
                device = try await client.clearPushToken(device: store.deviceId)
            }
            let human = device.pushToken == nil ? "This device has no push token now." : "This device is woken through APNs \(environment.rawValue)."
            Output.emit(json: options.json, human: human, ["device": DevicesCommand.object(device)])
        }
    }
}

extension PushEnvironment: ExpressibleByArgument {}

extension Data {
    /// The bytes of hexadecimal text, or `nil` when it is not.
    fileprivate init?(hexadecimal text: String) {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
            let pair = text[index..<next]
            guard pair.count == 2, pair.allSatisfy(\.isHexDigit), pair.allSatisfy(\.isASCII), let byte = UInt8(pair, radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
