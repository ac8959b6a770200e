import ArgumentParser
import FerryClient
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
            ServeCommand.self, SignUpCommand.self, LoginCommand.self, LogoutCommand.self, WhoAmICommand.self,
            StatusCommand.self, ProfileCommand.self, ResetCommand.self,
            PutCommand.self, GetCommand.self, ListCommand.self, RemoveCommand.self, SyncCommand.self, BlobCommand.self,
            SpacesCommand.self, DevicesCommand.self, DoctorCommand.self,
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
        } catch let error as ServerStartupError {
            fail(error.message)
        } catch let error as AuthError {
            fail("\(error.message) (\(error.code))")
        } catch let error as StoreError {
            fail(error.description)
        } catch let error as SyncError {
            fail(error.description)
        } catch let error as CommandFailure {
            fail(error.message, status: error.status)
        } catch {
            let status = FerryCommand.exitCode(for: error)
            if status == .success || error is CleanExit {
                FerryCommand.exit(withError: error)
            }
            let message = FerryCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            fail("\(message) (see 'ferry help')", status: status.rawValue)
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

    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data("ferry: error: \(message)\n".utf8))
        exit(status)
    }
}

/// A failure a command reports as one line with its own exit status.
struct CommandFailure: Error {
    var message: String
    var status: Int32 = 1
}
