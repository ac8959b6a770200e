import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry spaces …`: the spaces this account belongs to, their members and invitations (all but an offline
/// `create` need the server).
struct SpacesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spaces", abstract: "List, create and share spaces: invitations, members and roles.",
        subcommands: [
            List.self, Create.self, Invite.self, Join.self, Invitations.self, Uninvite.self, Members.self, Role.self, Remove.self, Leave.self,
        ]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the spaces you belong to.")

        @OptionGroup var options: ClientOptions

        func run() async throws {
            let spaces = try await SpacesCommand.client(options).spaces()
            Output.emit(json: options.json, human: spaces.map(SpacesCommand.line).joined(separator: "\n"), ["spaces": spaces.map { JSONValue.members(SpacesCommand.object($0)) }])
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a shared space you own; prints its id (offline, it is queued for the next 'ferry sync')."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space's name.") var name: String
        @Option(help: "The new space's id. [default: a new UUID]") var id: String?
        @Flag(help: "End-to-end encrypt its records; this device makes its key (it must be trusted).") var encrypted = false

        func run() async throws {
            let spaceID = try id.map { try RecordText.uuid($0, what: "--id") } ?? UUID()
            let request = CreateSpaceRequest(id: spaceID, name: name, encrypted: encrypted ? true : nil)
            if encrypted {
                // Queued, then one sync creates it, makes its key here and seals it to every trusted device:
                // nothing written into it ever leaves this device in clear.
                let profile = try ClientProfile(options)
                try profile.openStore().queueSpace(request)
                do {
                    let report = try await SyncCommand.syncOnce(profile, client: SyncClient(auth: profile.makeAuthClient()))
                    if report.lockedSpaces > 0 {
                        FileHandle.standardError.write(Data("ferry: the space exists but has no key yet: this device is not trusted (see 'ferry devices ls')\n".utf8))
                    }
                } catch let error as RemoteError where error.isOffline {
                    FileHandle.standardError.write(Data("ferry: offline; the space is queued and 'ferry sync' creates it and its key\n".utf8))
                }
                Output.emit(json: options.json, human: RecordText.id(spaceID), ["id": RecordText.id(spaceID), "name": name, "encrypted": true])
                return
            }
            do {
                let space = try await SpacesCommand.client(options).createSpace(request)
                Output.emit(json: options.json, human: RecordText.id(space.id), SpacesCommand.object(space))
            } catch let error as RemoteError where error.isOffline {
                // Offline: the space is queued with its id, so records can go into it now; 'ferry sync' creates it first.
                try ClientProfile(options).openStore().queueSpace(request)
                FileHandle.standardError.write(Data("ferry: offline; the space is queued and 'ferry sync' creates it\n".utf8))
                Output.emit(json: options.json, human: RecordText.id(spaceID), ["id": RecordText.id(spaceID), "name": name, "queued": true])
            }
        }
    }

    /// The space `text` names: its id, or the name of one of the account's spaces (case ignored) when only one has it.
    static func resolve(_ text: String, _ options: ClientOptions) async throws -> UUID {
        if let id = UUID(uuidString: text) { return id }
        let spaces = try await client(options).spaces()
        let named = spaces.filter { $0.name.caseInsensitiveCompare(text) == .orderedSame }
        switch named.count {
        case 1:
            return named[0].id
        case 0:
            throw CommandFailure(
                message: "no space of yours is named '\(text)'\(NearMiss.hint(for: text, among: spaces.map(\.name))) (see 'ferry spaces ls')", status: 64,
                code: "unknown_space"
            )
        default:
            throw CommandFailure(
                message: "\(named.count) of your spaces are named '\(text)': use one's id (\(named.map { RecordText.id($0.id) }.joined(separator: ", ")))",
                status: 64, code: "ambiguous_space"
            )
        }
    }

    static func client(_ options: ClientOptions) throws -> SyncClient {
        let profile = try ClientProfile(options)
        _ = try profile.signedInUserID()
        return SyncClient(auth: profile.makeAuthClient())
    }

    static func line(_ space: SpaceSummary) -> String {
        var tags = [space.role.rawValue]
        if space.isPersonal { tags.append("personal") }
        if space.isEncrypted { tags.append("encrypted") }
        return "\(RecordText.id(space.id))  \(space.name)  (\(tags.joined(separator: ", ")))"
    }

    static func object(_ space: SpaceSummary) -> [String: any JSONOutput] {
        [
            "id": RecordText.id(space.id), "name": space.name, "role": space.role.rawValue,
            "personal": space.isPersonal, "encrypted": space.isEncrypted, "seq": space.seq,
        ]
    }
}
