import ArgumentParser
import FerryClient
import FerryCore
import Foundation

extension SpacesCommand {
    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invite",
            abstract: "Invite someone into a space: prints a single-use code for them to redeem with 'ferry spaces join CODE'.",
            discussion: "Only an account signed in with EMAIL can redeem the code, once, before it expires. Pass it on privately."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String
        @Argument(help: "The invitee's email.") var email: String
        @Option(help: "admin, member or viewer.") var role: String = "member"
        @Option(help: "Days until the code expires (the server's default is 7).") var expiresInDays: Int?

        func run() async throws {
            guard let role = SpaceRole(rawValue: role), role != .owner else {
                throw CommandFailure(message: "--role is admin, member or viewer, not '\(role)'", status: 64)
            }
            let spaceID = try await SpacesCommand.resolve(space, options)
            let request = InviteRequest(email: email, role: role, expiresIn: expiresInDays.map { $0 * 86_400 })
            let invitation = try await SpacesCommand.client(options).invite(request, to: spaceID)
            let code = invitation.code ?? ""
            // Standard output is the code alone, so `CODE=$(ferry spaces invite …)` works; the how-to goes to standard error.
            if !options.json {
                FileHandle.standardError.write(Data(
                    "ferry: invited \(invitation.email) as \(invitation.role.rawValue) until \(Timestamp.format(invitation.expiresAt)); they run: ferry spaces join CODE\n".utf8
                ))
            }
            Output.emit(json: options.json, human: code, SpacesCommand.object(invitation).merging(["code": code]) { _, new in new })
        }
    }

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "join", abstract: "Join a space with the invitation code its owner or an admin gave you.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The invitation code.") var code: String

        func run() async throws {
            let space = try await SpacesCommand.client(options).acceptInvitation(code: code)
            Output.emit(json: options.json, human: "Joined \(space.name) as \(space.role.rawValue): \(RecordText.id(space.id)). 'ferry sync' brings its records.", SpacesCommand.object(space))
        }
    }

    struct Invitations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "invitations", abstract: "List a space's pending invitations (owners and admins).")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String

        func run() async throws {
            let invitations = try await SpacesCommand.client(options).invitations(of: try await SpacesCommand.resolve(space, options))
            let lines = invitations.map { "\(RecordText.id($0.id))  \($0.email)  \($0.role.rawValue)  expires \(Timestamp.format($0.expiresAt))" }
            Output.emit(json: options.json, human: lines.isEmpty ? "No pending invitations." : lines.joined(separator: "\n"), [
                "invitations": invitations.map { JSONValue.members(SpacesCommand.object($0)) },
            ])
        }
    }

    struct Uninvite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "uninvite", abstract: "Revoke a pending invitation: its code stops working.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String
        @Argument(help: "The invitation's id (see 'ferry spaces invitations SPACE').") var invitation: String

        func run() async throws {
            let (spaceID, invitationID) = (try await SpacesCommand.resolve(space, options), try RecordText.uuid(invitation, what: "INVITATION"))
            try await SpacesCommand.client(options).revokeInvitation(invitationID, in: spaceID)
            Output.emit(json: options.json, human: "Revoked invitation \(RecordText.id(invitationID)).", ["revoked": RecordText.id(invitationID)])
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "members", abstract: "List a space's members and their roles.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String

        func run() async throws {
            let members = try await SpacesCommand.client(options).members(of: try await SpacesCommand.resolve(space, options))
            Output.emit(json: options.json, human: members.map { "\($0.email)  \($0.role.rawValue)" }.joined(separator: "\n"), [
                "members": members.map { JSONValue.members(["email": $0.email, "user_id": $0.userId.map(RecordText.id).json, "role": $0.role.rawValue]) },
            ])
        }
    }

    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "role", abstract: "Change a member's role (owners and admins; only owners make owners).")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String
        @Argument(help: "The member's email.") var email: String
        @Argument(help: "owner, admin, member or viewer.") var role: String

        func run() async throws {
            guard let role = SpaceRole(rawValue: role) else {
                throw CommandFailure(message: "ROLE is owner, admin, member or viewer, not '\(role)'", status: 64)
            }
            let (client, spaceID) = (try SpacesCommand.client(options), try await SpacesCommand.resolve(space, options))
            let member = try await client.changeRole(of: try await SpacesCommand.member(email, in: spaceID, client), in: spaceID, to: role)
            Output.emit(json: options.json, human: "\(member.email) is now \(member.role.rawValue).", ["email": member.email, "role": member.role.rawValue])
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a member from a space (owners and admins); an encrypted space then gets a new key."
        )

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String
        @Argument(help: "The member's email.") var email: String

        func run() async throws {
            let (client, spaceID) = (try SpacesCommand.client(options), try await SpacesCommand.resolve(space, options))
            try await client.removeMember(try await SpacesCommand.member(email, in: spaceID, client), from: spaceID)
            Output.emit(json: options.json, human: "Removed \(email.lowercased()).", ["removed": email.lowercased(), "space": RecordText.id(spaceID)])
        }
    }

    struct Leave: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "leave", abstract: "Leave a space (its only owner must first make someone else owner).")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The space: its id, or its name when no other of your spaces has it.") var space: String

        func run() async throws {
            let profile = try ClientProfile(options)
            let spaceID = try await SpacesCommand.resolve(space, options)
            try await SyncClient(auth: profile.makeAuthClient()).removeMember(try profile.signedInUserID(), from: spaceID)
            // This device no longer shows what it can no longer sync.
            try? profile.openStore().forgetSpace(spaceID)
            Output.emit(json: options.json, human: "Left \(RecordText.id(spaceID)); its records are gone from this device.", ["left": RecordText.id(spaceID)])
        }
    }

    /// The user id of the member with `email`, or a failure naming the space's members command.
    static func member(_ email: String, in space: UUID, _ client: SyncClient) async throws -> UUID {
        let wanted = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard let id = try await client.members(of: space).first(where: { $0.email == wanted })?.userId else {
            throw CommandFailure(message: "\(wanted) is not a member of \(RecordText.id(space)) (see 'ferry spaces members \(RecordText.id(space))')")
        }
        return id
    }

    static func object(_ invitation: SpaceInvitation) -> [String: any JSONOutput] {
        [
            "id": RecordText.id(invitation.id), "space": RecordText.id(invitation.spaceId), "email": invitation.email,
            "role": invitation.role.rawValue, "expires_at": Timestamp.format(invitation.expiresAt),
        ]
    }
}
