import Foundation

/// The command line of `ferry-benchmark`.
struct BenchmarkOptions {
    var rows = 100_000
    var postgresURL: String?
    var noOpSyncs = 20
    /// Rows of the large device store for `large_store_ratio`; 0 skips that measure.
    var largeRows = 1_000_000
    var isJSON = false
    /// `--realtime`: the realtime benchmark instead of the sync one.
    var isRealtime = false
    var devices = 1_000
    var writes = 5
    /// `--carried-change-bytes`: the realtime server's budget for pokes that carry their changes (0: plain pokes).
    var carriedChangeBytes: Int?
    /// `--listeners`: the realtime devices are bare streams, not engines with stores (thousands fit on one machine).
    var isListeners = false
    /// `--restart`: after the writes, restart the server and time until every stream is open again.
    var restarts = false
    /// `--instances 2` (with `--realtime --postgres`): a second server on the same database; the devices' streams
    /// alternate between the two, so half of every write's deliveries cross PostgreSQL's LISTEN/NOTIFY.
    var instances = 1
    /// `--blobs`: the blob benchmark, with a file of `megabytes` MiB.
    var isBlobs = false
    var megabytes = 256
    /// `--blob-files` (with `--blobs --postgres`): blob bytes in files beside PostgreSQL (`--blob-dir`), not in it.
    var blobFiles = false
    /// `--chunk-mib N` (with `--blobs`): the devices' `blobChunkSize`; the SDK's default otherwise.
    var blobChunkMiB: Int?
    /// `--rest`: the table API benchmark (`rows` sermons, five notes each; 2,000 unless `--rows` says).
    var isRest = false
    /// `--notifications`: do background notifications slow commits (APNs normal, slow, down)?
    var isNotifications = false

    static let usage = """
        usage: ferry-benchmark [--rows N] [--postgres URL] [--noop-syncs N] [--large-rows N (0 skips)] [--json]
               ferry-benchmark --realtime [--devices N] [--writes K] [--carried-change-bytes B (0: plain pokes)] [--listeners] [--restart] [--postgres URL [--instances 2]] [--json]
               ferry-benchmark --blobs [--megabytes M] [--chunk-mib N] [--postgres URL [--blob-files]] [--json]
               ferry-benchmark --rest [--rows N] [--postgres URL] [--json]
               ferry-benchmark --notifications [--devices N (at most 200)] [--writes K] [--postgres URL] [--json]
        """

    static func parse(_ arguments: [String]) -> BenchmarkOptions {
        var options = BenchmarkOptions()
        var iterator = arguments.makeIterator()
        func number(_ name: String, minimum: Int) -> Int {
            guard let value = iterator.next().flatMap(Int.init), value >= minimum else { fail("\(name) needs a number ≥ \(minimum)") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--rows": options.rows = number(argument, minimum: 1)
            case "--noop-syncs": options.noOpSyncs = number(argument, minimum: 1)
            case "--large-rows":
                options.largeRows = number(argument, minimum: 0)
                if options.largeRows > 0, options.largeRows <= LargeStoreBenchmark.smallRows {
                    fail("--large-rows must be above \(LargeStoreBenchmark.smallRows), or 0 to skip")
                }
            case "--postgres":
                guard let value = iterator.next() else { fail("--postgres needs a URL") }
                options.postgresURL = value
            case "--json": options.isJSON = true
            case "--realtime": options.isRealtime = true
            case "--devices": options.devices = number(argument, minimum: 1)
            case "--writes": options.writes = number(argument, minimum: 1)
            case "--carried-change-bytes": options.carriedChangeBytes = number(argument, minimum: 0)
            case "--listeners": options.isListeners = true
            case "--restart": options.restarts = true
            case "--instances": options.instances = number(argument, minimum: 1)
            case "--blobs": options.isBlobs = true
            case "--rest":
                options.isRest = true
                if !arguments.contains("--rows") { options.rows = 2000 }
            case "--notifications":
                options.isNotifications = true
                if !arguments.contains("--devices") { options.devices = 20 }
                if !arguments.contains("--writes") { options.writes = 200 }
            case "--megabytes": options.megabytes = number(argument, minimum: 1)
            case "--blob-files": options.blobFiles = true
            case "--chunk-mib": options.blobChunkMiB = number(argument, minimum: 1)
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                fail("unknown argument \(argument)")
            }
        }
        if options.restarts, !options.isListeners { fail("--restart needs --listeners") }
        if options.instances > 1, !options.isRealtime || options.postgresURL == nil { fail("--instances needs --realtime and --postgres") }
        if options.blobChunkMiB != nil, !options.isBlobs { fail("--chunk-mib needs --blobs") }
        if options.blobFiles, !options.isBlobs || options.postgresURL == nil { fail("--blob-files needs --blobs and --postgres") }
        return options
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ferry-benchmark: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}
