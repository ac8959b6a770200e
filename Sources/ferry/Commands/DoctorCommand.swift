import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry doctor [--repair]`: checks the local store; `--repair` resets it for a full resync, keeping unsent writes.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Check the local store (integrity, cursors, outbox) and list refused writes.",
        discussion: "Exits 1 when a problem is found and --repair was not given."
    )

    @OptionGroup var options: ClientOptions
    @Flag(help: "Reset cursors and synced rows so the next 'ferry sync' pulls everything again; unsent writes are kept.")
    var repair = false

    func run() async throws {
        let store = try ClientProfile(options).openStore()
        let report = try store.doctor()
        let rejections = try store.rejections()
        if repair { try store.resetAndResync() }
        var lines = report.isHealthy ? ["The local store is healthy."] : report.problems.map { "problem: \($0.message)" }
        lines.append("\(report.pendingCount) pending, \(report.spaceCount) spaces, \(rejections.count) refused writes")
        lines += rejections.map {
            "refused: \($0.mutation.op.rawValue) \($0.mutation.collection) \(RecordText.id($0.mutation.id)): \($0.message) (\($0.code))"
        }
        if repair { lines.append("Reset: the next 'ferry sync' pulls every space again; unsent writes were kept.") }
        Output.emit(json: options.json, human: lines.joined(separator: "\n"), [
            "healthy": report.isHealthy, "repaired": repair,
            "problems": report.problems.map { ["code": $0.code, "message": $0.message] as [String: String] },
            "pending": report.pendingCount, "spaces": report.spaceCount,
            "rejections": rejections.map {
                JSONValue.members(["mutation_id": $0.mutation.mutationId, "collection": $0.mutation.collection, "id": RecordText.id($0.mutation.id),
                 "op": $0.mutation.op.rawValue, "code": $0.code, "message": $0.message])
            },
        ])
        if !report.isHealthy && !repair {
            throw CommandFailure(message: "the local store has \(report.problems.count) problem(s); 'ferry doctor --repair' resets it for a full resync")
        }
    }
}
