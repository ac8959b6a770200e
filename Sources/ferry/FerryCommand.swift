import ArgumentParser
import FerryClient
import FerryCore
import FerryServer
import Foundation
import Logging

/// `ferry`: the command-line face of Ferry. Each subcommand parses, calls the library, prints.
struct FerryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Offline-first sync: the server, and a client that exercises it.",
        version: "0.1.0",
        subcommands: [
            ServeCommand.self, SignUpCommand.self, LoginCommand.self, SendCodeCommand.self, VerifyCommand.self, LogoutCommand.self, WhoAmICommand.self,
            AccountCommand.self, StatusCommand.self, ProfileCommand.self, ResetCommand.self,
            PutCommand.self, GetCommand.self, ListCommand.self, RemoveCommand.self, SyncCommand.self, BlobCommand.self,
            SpacesCommand.self, DevicesCommand.self, DoctorCommand.self, BackupCommand.self, ExportCommand.self, AdminCommand.self,
            VaultCommand.self,
        ]
    )
}

/// Runs the command line; every failure ends with one line on standard error and a non-zero status.
@main
enum FerryMain {
    static func main() async {
        do {
            var command = try FerryCommand.parseAsRoot()
            if !(command is ServeCommand) { quietLibraryLogs() }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as StoreError where error.code == .schemaOutdated {
            fail("\(error.message) This profile's store was made for an older schema: run 'ferry reset' (with the same --profile) to start it over, then 'ferry login'.", code: error.code)
        } catch let error as CommandFailure {
            fail(error.message, code: error.shownCode, status: error.status)
        } catch let error as any FerryError {
            // The description: the message, or more where the error has more to say (a schema error's file and line).
            fail(error.description, code: error.code)
        } catch {
            let status = FerryCommand.exitCode(for: error)
            if status == .success || error is CleanExit {
                FerryCommand.exit(withError: error)
            }
            // ArgumentParser's first line says what is wrong; its usage line says how to call the command.
            let lines = FerryCommand.fullMessage(for: error).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            var message = lines.first ?? "invalid arguments"
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            let usage = lines.first { $0.hasPrefix("Usage:") }.map { "; usage: \($0.dropFirst("Usage:".count).trimmingCharacters(in: .whitespaces))" } ?? ""
            fail("\(message)\(usage) (see 'ferry help')", code: .invalidArguments, status: status.rawValue)
        }
    }

    /// Client commands print their own results; the SDK's logs show only warnings and errors
    /// (FERRY_LOG_LEVEL raises or lowers that). `serve` sets up its own logging.
    static func quietLibraryLogs() {
        let level = ProcessInfo.processInfo.environment["FERRY_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// Every failure's one line: `ferry: error: message (code)`.
    static func fail(_ message: String, code: ErrorCode, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data("ferry: error: \(message) (\(code))\n".utf8))
        exit(status)
    }
}

/// A failure a command reports as one line with its own exit status (docs/cli.md, "Exit status").
struct CommandFailure: Error {
    var message: String
    var status: Int32 = 1
    var code: ErrorCode?

    /// The failure's own code, or the one its exit status stands for.
    var shownCode: ErrorCode {
        code ?? (status == 64 ? .invalidArguments : status == 65 ? .invalidData : status == 66 ? .noInput : .commandFailed)
    }
}

extension ErrorCode {
    /// A command's arguments, options or settings are wrong (exit status 64).
    static let invalidArguments: ErrorCode = "invalid_arguments"
    /// The data a command was given or found is not what it needs (exit status 65).
    static let invalidData: ErrorCode = "invalid_data"
    /// A file a command was asked to read does not exist or cannot be read (exit status 66).
    static let noInput: ErrorCode = "no_input"
    /// A command failed for a reason without a code of its own (exit status 1).
    static let commandFailed: ErrorCode = "command_failed"
}
