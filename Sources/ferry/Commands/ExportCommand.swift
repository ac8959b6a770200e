import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry export [--out FILE]`: everything the server holds for the signed-in account, as a ZIP archive (a
/// data-portability request answered by the user, or by an operator with the admin API).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Download everything the server holds for this account as a ZIP archive.",
        discussion: """
            The archive holds account.json, profile.json, devices.json, spaces.json, records/<collection>.json (every \
            record of your spaces) and files/<space>/<sha256> (the files they name). An operator exports any user with \
            GET /auth/v1/admin/users/{id}/export and the service-role key.
            """
    )

    @OptionGroup var options: ClientOptions
    @Option(help: "Where to write the archive. [default: ferry-export-<date>.zip in the current folder]") var out: String?

    func run() async throws {
        let profile = try ClientProfile(options)
        let archive = try await SyncClient(auth: profile.makeAuthClient()).exportArchive()
        let path = out ?? "ferry-export-\(Timestamp.format(Date()).prefix(10)).zip"
        // It holds the account's data: owner-only, as the profile's own files.
        guard FileManager.default.createFile(atPath: path, contents: archive, attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure(message: "cannot write \(path)", status: 73)
        }
        Output.emit(json: options.json, human: "Wrote \(path) (\(archive.count) bytes).", ["path": path, "bytes": archive.count])
    }
}
