import FerryClient
import Foundation
import GRDB

/// `large_store_ratio`: the time to pull and apply 10 new remote changes into a device holding `largeRows` notes,
/// over the same into a device holding 1,000.
///
/// Method. A separate account gets 1,000 notes (pushed by a writer device); two on-disk devices sync them.
/// The large device's table is then filled to `largeRows` rows by copying: one `INSERT … SELECT` over a recursive
/// counter, cloning a synced row under made-up ids (`0000000k-0000-4000-8000-00000000000k`) and negative `_seq`s,
/// straight into SQLite. Those rows were never synced (the server holds 1,000), which is what this measures:
/// the device's cost of a small pull as its own store grows. Then, each round, the writer pushes 10 new notes and
/// both devices sync (in alternating order), timed; one warm-up round is not counted. The ratio is of the medians:
/// fifteen rounds, since one sync takes a few milliseconds, and with five the same code's ratio ranged from 1.01 to 1.19.
struct LargeStoreBenchmark {
    static let smallRows = 1_000
    static let changesPerRound = 10

    struct Outcome {
        var largeRows: Int
        var smallMilliseconds: [Double]
        var largeMilliseconds: [Double]
        var buildSeconds: Double

        var ratio: Double { median(largeMilliseconds) / median(smallMilliseconds) }
    }

    var endpoint: BenchmarkDevice.Endpoint
    var folder: URL
    var largeRows: Int
    var rounds = 15

    func run() async throws -> Outcome {
        let email = "bench-large-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let password = "correct horse battery"
        let writer = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: true, fileURL: nil)
        let small = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: false, fileURL: folder.appending(path: "small-store.sqlite"))
        let large = try await BenchmarkDevice.signIn(endpoint, email: email, password: password, signUp: false, fileURL: folder.appending(path: "large-store.sqlite"))
        return try await BenchmarkDevice.running([writer, small, large]) { () async throws -> Outcome in
            for index in 0..<Self.smallRows { try writer.store.save(collection: "notes", fields: noteFields(index)) }
            _ = try await writer.syncRetrying()
            for device in [small, large] {
                let (report, _) = try await device.syncRetrying()
                guard report.applied == Self.smallRows else { throw BenchmarkError("a large-store device applied \(report.applied) of \(Self.smallRows)") }
            }
            let clock = ContinuousClock()
            progress("large store: copying rows up to \(largeRows)")
            let buildSeconds = try clock.measure { try fill(large.store.writer, upTo: largeRows) }.seconds
            progress("large store: \(largeRows) rows in \(String(format: "%.1f", buildSeconds)) s; \(rounds) rounds of \(Self.changesPerRound) changes")

            var outcome = Outcome(largeRows: largeRows, smallMilliseconds: [], largeMilliseconds: [], buildSeconds: buildSeconds)
            for round in 0...rounds {
                for index in 0..<Self.changesPerRound {
                    try writer.store.save(collection: "notes", fields: noteFields(1_000_000_000 + round * 100 + index))
                }
                _ = try await writer.syncRetrying()
                var timings: [Bool: Double] = [:]
                for isLarge in round % 2 == 0 ? [false, true] : [true, false] {
                    let device = isLarge ? large : small
                    let start = clock.now
                    let report = try await device.engine.sync()
                    timings[isLarge] = (clock.now - start).seconds * 1000
                    guard report.applied == Self.changesPerRound else {
                        throw BenchmarkError("a large-store round applied \(report.applied) of \(Self.changesPerRound) changes")
                    }
                }
                guard round > 0 else { continue }  // the warm-up round
                outcome.smallMilliseconds.append(timings[false] ?? 0)
                outcome.largeMilliseconds.append(timings[true] ?? 0)
            }
            return outcome
        }
    }

    /// Copies a synced note under new ids until `notes` holds `count` rows.
    func fill(_ writer: any DatabaseWriter, upTo count: Int) throws {
        try writer.write { db in
            let existing = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes") ?? 0
            guard count > existing else { return }
            let columns = try db.columns(in: "notes").map(\.name)
            let values = columns.map { column in
                switch column {
                case "id": "printf('%08x-0000-4000-8000-%012x', k, k)"
                case "title": "'Copy ' || k"
                case "_seq": "-k"
                default: "t.\(column.quotedDatabaseIdentifier)"
                }
            }
            try db.execute(
                sql: """
                    WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)
                    INSERT INTO notes (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")))
                    SELECT \(values.joined(separator: ", ")) FROM n, (SELECT * FROM notes LIMIT 1) AS t
                    """,
                arguments: [count - existing]
            )
        }
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}
