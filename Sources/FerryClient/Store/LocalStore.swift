import FerryCore
import FerryGRDB
import FerrySecurity
import Foundation
import GRDB
import Logging
import Synchronization

/// The device's database: the schema's collections, the outbox of local writes, and the sync state.
///
/// Local writes apply at once and append to the outbox in the same transaction (nothing written is lost
/// between the two). Pulled changes merge field by field with ``FerryCore/RecordState/merge(_:)`` against
/// each row's clocks, so edits that wait in the outbox survive a pull. Every write ticks the store's
/// persisted ``FerryCore/HybridClock``, whose node is the device id.
///
/// ```swift
/// let store = try LocalStore(fileURL: folder.appending(path: "store.sqlite"), schema: schema, defaultSpace: user.id)
/// let note = try store.save(collection: "notes", fields: ["text": "Key point"])
/// ```
public final class LocalStore: Sendable {
    /// The database: a `DatabasePool` on a file, or an in-memory queue. Only the store and the sync engine write it,
    /// so every local write goes through the outbox; apps read through ``reader``.
    package let writer: any DatabaseWriter
    /// Read-only access to the database, for an app's own queries and GRDB observations (`ValueObservation`). Write
    /// with ``save(collection:id:space:fields:)`` and ``delete(collection:id:)``, which keep the outbox.
    public var reader: any DatabaseReader { AnyDatabaseReader(writer) }
    /// This device's id: the `deviceId` of pushes and the node of its clocks.
    public let deviceId: UUID
    /// The space of new records that name none (usually the personal space, whose id is the user's).
    public let defaultSpace: UUID?
    /// The folder of the blob cache: attached files and downloaded blobs, named by their SHA-256. A store given none
    /// (one in memory) has a temporary folder of its own, removed with the store.
    public let blobDirectory: URL
    /// Whether ``blobDirectory`` is the store's own temporary folder, which goes when the store does.
    private let ownsBlobDirectory: Bool

    let now: @Sendable () -> Date
    let logger: Logger
    private let currentSchema: Mutex<Schema>
    /// Each collection's `INSERT OR REPLACE` text: every saved row needs it.
    private let upserts = StatementTextCache()
    /// Keeps syncs of a store file to one process at a time (``StoreSyncLock``); `nil` for a store in memory.
    let syncLock: StoreSyncLock?
    /// The clock as the writer connection last left it, with that connection's `data_version` then (``loadClock(_:)``).
    private let writerClock = Mutex<(dataVersion: Int64, clock: HybridClock)?>(nil)

    /// The schema the store's tables follow.
    public var schema: Schema { currentSchema.withLock { $0 } }

    /// The statement that writes a whole row of `collection`: `id`, the sync columns, then its fields in order.
    func upsertSQL(_ collection: CollectionDefinition) -> String {
        upserts.text(for: collection) { collection in
            let columns = SQLDialect.syncColumns + [SQLDialect.updatedAtColumn] + collection.fields.map(\.name)
            return "INSERT OR REPLACE INTO \(Self.quote(collection.name)) (\(columns.map(Self.quote).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        }
    }

    /// Opens (creating when needed) the store in the file at `fileURL`, and migrates its tables to `schema`.
    ///
    /// - Parameters:
    ///   - fileURL: the SQLite file; its folder must exist.
    ///   - schema: the collections to sync; a newer schema than the file's adds tables and columns.
    ///   - defaultSpace: the space of new records that name none.
    ///   - deviceId: the device id a **new** store takes (an existing store keeps its own). Pass the id an app kept
    ///     beside its device key (say, in the Keychain) so that a store deleted and made again is the same device
    ///     to the server, with its trust; `nil` makes a new id.
    ///   - now: the wall clock behind record clocks and timestamps (tests freeze it).
    ///   - logger: receives migrations and sync bookkeeping; never field values.
    /// - Throws: ``StoreError`` when the file cannot be opened or the schema change is destructive.
    ///   - sharedAcrossProcesses: the file lives in an App Group container that the app's extensions (a widget, a share
    ///     extension) open too: the store then follows ``suspend()``/``resume()``, which the app calls as it goes to the
    ///     background and comes back, so iOS does not end it for holding a database lock while suspended.
    public convenience init(
        fileURL: URL, schema: Schema, defaultSpace: UUID? = nil, deviceId: UUID? = nil, sharedAcrossProcesses: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "ferry.store")
    ) throws {
        let pool: DatabasePool
        do {
            // The device's data is its owner's alone: SQLite gives the -wal and -shm files the database file's mode.
            try OwnerOnlyPath.file(fileURL.path())
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.observesSuspensionNotifications = sharedAcrossProcesses
            configuration.prepareDatabase { db in try db.zeroDeletedContentOnlyInWrittenPages() }
            pool = try DatabasePool(path: fileURL.path(), configuration: configuration)
        } catch {
            throw StoreError(code: .storeFailed, message: "Could not open the store at \(fileURL.path()): \(error).")
        }
        try self.init(
            writer: pool, schema: schema, defaultSpace: defaultSpace, deviceId: deviceId,
            blobDirectory: fileURL.deletingLastPathComponent().appending(path: fileURL.lastPathComponent + ".blobs"), now: now, logger: logger
        )
    }

    /// Opens a store in memory, gone when the value is released (for tests and previews).
    public static func inMemory(
        schema: Schema, defaultSpace: UUID? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "ferry.store")
    ) throws -> LocalStore {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue()
        } catch {
            throw StoreError(code: .storeFailed, message: "Could not open an in-memory store: \(error).")
        }
        return try LocalStore(writer: queue, schema: schema, defaultSpace: defaultSpace, now: now, logger: logger)
    }

    deinit {
        if ownsBlobDirectory { try? FileManager.default.removeItem(at: blobDirectory) }
    }

    /// Opens a store on any GRDB writer, creating Ferry's tables and migrating the collections to `schema`.
    ///
    /// `blobDirectory` is the folder of the blob cache; without one the store keeps its cache in a temporary folder of
    /// its own, removed when the store is released.
    public init(
        writer: any DatabaseWriter, schema: Schema, defaultSpace: UUID? = nil, deviceId: UUID? = nil, blobDirectory: URL? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "ferry.store")
    ) throws {
        self.writer = writer
        self.blobDirectory = blobDirectory ?? FileManager.default.temporaryDirectory.appending(path: "ferry-blobs-\(UUID().uuidString)")
        ownsBlobDirectory = blobDirectory == nil
        do {
            try OwnerOnlyPath.folder(self.blobDirectory.path())
        } catch {
            throw StoreError(code: .storeFailed, message: "Could not create the blob cache at \(self.blobDirectory.path()): \(error).")
        }
        self.defaultSpace = defaultSpace
        self.now = now
        self.logger = logger
        self.currentSchema = Mutex(schema)
        let pool = writer as? DatabasePool
        syncLock = pool.map { StoreSyncLock(path: $0.path + ".sync-lock") }
        // Processes opening the file at once (an app and its extension) set it up one after the other: a lock of its
        // own, held for the set-up only, so opening a store never waits for another process's sync.
        let setupLock = pool.map { StoreSyncLock(path: $0.path + ".setup-lock") }
        try setupLock?.acquireBlocking()
        defer { setupLock?.release() }
        let generated = deviceId ?? UUID()
        self.deviceId = try Self.storeFailure("prepare") {
            try StoreMigrations.migrator.migrate(writer)
            return try writer.write { db in
                if let text = try String.fetchOne(db, sql: "SELECT value FROM ferry_state WHERE key = 'device_id'"),
                   let id = UUID(uuidString: text) {
                    return id
                }
                try Self.setState(db, "device_id", generated.lowercasedText)
                if let defaultSpace {
                    try Self.setState(db, "first_default_space", defaultSpace.lowercasedText)
                }
                return generated
            }
        }
        try migrate(to: schema)
    }

    /// Suspends every store opened with `sharedAcrossProcesses` (GRDB's suspension): call it when the app goes to the
    /// background, after its last write, so that a suspended app holds no lock on the shared file.
    public static func suspend() {
        NotificationCenter.default.post(name: Database.suspendNotification, object: nil)
    }

    /// Resumes the stores ``suspend()`` suspended: call it when the app comes back to the foreground.
    public static func resume() {
        NotificationCenter.default.post(name: Database.resumeNotification, object: nil)
    }

    /// Tells this process's observers (queries, the sync engine's outbox watch) that another process, an extension,
    /// may have written the file: GRDB's observation sees only its own process's writes. Call it when the app becomes
    /// active; the engine then pushes what the extension wrote.
    public func noticeExternalChanges() async throws {
        try await writer.write { db in try db.notifyChanges(in: .fullDatabase) }
    }

    /// The node name of this device's clocks.
    public var node: String { deviceId.lowercasedText }

    /// Brings the collection tables to `schema`: new collections get tables, new fields get columns.
    ///
    /// - Throws: ``StoreError`` (`schema_outdated`) naming every destructive change, which is refused.
    package func migrate(to schema: Schema) throws {
        try writer.write { db in
            let applied = try Self.appliedCollections(db)
            let changes: [SchemaChange]
            do {
                changes = try SchemaMigrationPlanner.plan(from: applied, to: schema.collections)
            } catch {
                throw StoreError(code: .schemaOutdated, message: "The store cannot follow the new schema: \(error).")
            }
            for change in changes {
                for statement in SQLDialect.sqlite.statements(for: change) {
                    try db.execute(sql: statement)
                }
                let definition = try String(decoding: JSONEncoder().encode(change.collection), as: UTF8.self)
                try db.execute(
                    sql: "INSERT OR REPLACE INTO ferry_collections (name, definition) VALUES (?, ?)",
                    arguments: [change.collection.name, definition]
                )
            }
            // Unique keys are the server's to enforce: a local unique index would make a pulled row that
            // collides with a not-yet-pushed local one fail the whole pull. The server refuses the local one
            // (`unique_violation`) and it shows as rejected instead.
            let uniqueIndexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE INDEX%' AND tbl_name NOT LIKE 'ferry\\_%' ESCAPE '\\'")
            for index in uniqueIndexes {
                try db.execute(sql: "DROP INDEX \(SQLDialect.sqlite.quote(index))")
            }
            if !changes.isEmpty {
                logger.info("migrated the store", metadata: ["ferry.store.changes": "\(changes.count)"])
            }
        }
        currentSchema.withLock { $0 = schema }
    }

    /// The definition of collection `name`, or ``StoreError`` `unknown_collection`.
    public func collection(named name: String) throws -> CollectionDefinition {
        guard let collection = schema.collection(named: name) else { throw StoreError.unknownCollection(name, known: schema.collections.map(\.name)) }
        return collection
    }

    // MARK: Tables

    private static func appliedCollections(_ db: Database) throws -> [CollectionDefinition] {
        try String.fetchAll(db, sql: "SELECT definition FROM ferry_collections ORDER BY rowid").map {
            try JSONDecoder().decode(CollectionDefinition.self, from: Data($0.utf8))
        }
    }

    // MARK: State

    static func state(_ db: Database, _ key: String) throws -> String? {
        // Cached statements here and on every per-write path: each `put` reads the clock, and preparing a
        // statement (with GRDB's authorizer) cost more than running it.
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM ferry_state WHERE key = ?"), arguments: [key])
    }

    static func setState(_ db: Database, _ key: String, _ value: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO ferry_state (key, value) VALUES (?, ?)").execute(arguments: [key, value])
    }

    /// This device's clock, in a write transaction: the one the last write transaction left, unless another
    /// connection wrote to the store since.
    ///
    /// Every transaction of this store runs on the writer's one connection, whose `PRAGMA data_version` changes only
    /// when *another* connection commits (another process, or another store opened on the same file). While it
    /// stays the same, the clock kept in memory is the persisted one, or ahead of it after a rolled-back write, which
    /// issued nothing that lasted; reading it back from the tables was a twentieth of a local write's CPU.
    func loadClock(_ db: Database) throws -> HybridClock {
        let dataVersion = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
        if let known = writerClock.withLock({ $0 }), known.dataVersion == dataVersion { return known.clock }
        let clock = try persistedClock(db)
        writerClock.withLock { $0 = (dataVersion, clock) }
        return clock
    }

    /// Keeps `clock`, just loaded with ``loadClock(_:)`` in this transaction and then advanced, for the next one.
    func rememberClock(_ clock: HybridClock) {
        writerClock.withLock { known in known?.clock.observe(clock.latest) }
    }

    /// The persisted clock of this device: the saved reading, or the newest outbox entry's when that is later.
    ///
    /// A local write's reading is stored in the outbox entry it appends, so `put` and `remove` need not also save
    /// it in `ferry_state` (one page fewer written per local transaction). Anything that takes entries out of
    /// the outbox, or moves old ones to its end, first calls ``pinClock(_:)``.
    private func persistedClock(_ db: Database) throws -> HybridClock {
        // One statement: the saved reading, then the newest entry's clock map.
        let texts = try String.fetchAll(db.cachedStatement(sql: """
            SELECT value FROM ferry_state WHERE key = 'clock'
            UNION ALL SELECT * FROM (SELECT clocks FROM ferry_outbox ORDER BY mutation_id DESC LIMIT 1)
            """))
        var clock = HybridClock(node: node)
        for text in texts {
            if let saved = HLC(text) {
                clock.observe(saved)
            } else if let stamps = ClockMap.clocks(fromText: text) {
                for stamp in stamps.values { clock.observe(stamp) }
            }
        }
        return clock
    }

    /// Saves `clock` in `ferry_state` (in a write transaction begun with ``loadClock(_:)``).
    func saveClock(_ db: Database, _ clock: HybridClock) throws {
        try Self.setState(db, "clock", clock.latest.description)
        rememberClock(clock)
    }

    /// Saves the clock's latest reading in `ferry_state`, before outbox entries that may carry it are removed or
    /// reordered.
    func pinClock(_ db: Database) throws {
        try saveClock(db, loadClock(db))
    }

    /// The latest clock reading this device issued or observed.
    package func latestClock() throws -> HLC {
        try read { db in try persistedClock(db).latest }
    }

    /// The default space the store was created with (the first user's personal space), so an app can refuse
    /// to open one person's local data for another.
    public func creationDefaultSpace() throws -> UUID? {
        try read { db in try Self.state(db, "first_default_space").flatMap(UUID.init(uuidString:)) }
    }

    /// When the last sync finished, or `nil` before the first.
    public func lastSyncedAt() throws -> Date? {
        try read { db in try Self.state(db, "last_synced_at").flatMap(Timestamp.parse) }
    }

    func setLastSyncedAt(_ date: Date) throws {
        try write { db in try Self.setState(db, "last_synced_at", Timestamp.format(date)) }
    }

    // MARK: Access

    /// Runs `body` in a read, mapping database failures to ``StoreError``.
    ///
    /// On an in-memory queue the read runs on the queue as it is: GRDB's `read` there turns `PRAGMA query_only` on and
    /// off, and SQLite expires every prepared statement of the connection at each pragma, so every cached statement was
    /// compiled again after every read. The queue runs one access at a time, so the read is isolated all the same.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.storeFailure("read") { try writer is DatabaseQueue ? writer.unsafeRead(body) : writer.read(body) }
    }

    /// Runs `body` in a write transaction, mapping database failures to ``StoreError``.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.storeFailure("write") { try writer.write(body) }
    }

    /// Runs `body` in a read on GRDB's own queue, suspending the caller meanwhile: the sync engine reads batches of
    /// hundreds of rows, and a synchronous read would hold one of the few threads of Swift's cooperative pool (one per
    /// core) for the whole transaction while every other task of the app waits behind it.
    package func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer is DatabaseQueue ? writer.unsafeRead(body) : writer.read(body)
        } catch {
            throw Self.storeFailure(error, "read")
        }
    }

    /// Runs `body` in a write transaction on GRDB's own queue, suspending the caller meanwhile (as ``read(_:)-swift.method``).
    package func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer.write(body)
        } catch {
            throw Self.storeFailure(error, "write")
        }
    }

    /// `error` as a ``StoreError``: itself when it is one, `store_failed` naming `action` otherwise.
    static func storeFailure(_ error: any Error, _ action: String) -> any Error {
        if error is StoreError || error is CancellationError { return error }
        return StoreError(code: .storeFailed, message: "Could not \(action) the store: \(error).")
    }

    static func storeFailure<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw storeFailure(error, action)
        }
    }
}
