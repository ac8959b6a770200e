import FerryCore
import FerrySecurity
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import Synchronization

/// The Ferry server: loads the schema, opens and migrates the database, and serves HTTP.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.schemaFiles = ["Examples/tabletnotes.yaml"]
/// let server = try await FerryServer.prepare(configuration, logger: logger)
/// let service = server.service { address in print("listening on \(address)") }
/// try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class FerryServer: Sendable {
    /// Where a running server listens.
    public struct ListeningAddress: Sendable, CustomStringConvertible {
        /// The host it was asked to bind.
        public var host: String
        /// The bound port (the real one when 0 was asked for).
        public var port: Int
        /// `http://host:port`.
        public var baseURL: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
        public var description: String { baseURL }
    }

    public let configuration: ServerConfiguration
    /// The open database.
    public let storage: any DatabaseStorage
    /// The loaded schema.
    public let schema: Schema
    /// What start-up changed in the collection tables.
    public let appliedSchemaChanges: [SchemaChange]
    /// The signing secret and the anon key.
    public let keys: ServerKeys
    let auth: AuthService
    let sync: SyncService
    let tables: TableService
    let accounts: AccountService
    let apple: AppleSignInService
    let emailCodes: EmailCodeService
    let devices: DeviceService
    let secrets: SecretsService
    let spaces: SpaceService
    let blobs: BlobService
    let objects: ObjectStorageService
    let blobCollector: BlobCollector
    /// This instance's open streams.
    let hub: RealtimeHub
    /// APNs notifications, when configured.
    let notifications: NotificationService?
    /// Records, spaces, devices and everything else beside accounts (the same database as ``storage``).
    let records: any RecordsStorage
    /// The console's charts, sampled from the metrics.
    let activity: ActivitySampler
    /// The errors answered lately, for the console's live tail.
    let errorTail = ErrorTail()
    let services: [any Service]
    let logger: Logger
    let registry: PrometheusCollectorRegistry
    /// The running service group, so ``shutdown()`` can stop it gracefully.
    let runningGroup = Mutex<ServiceGroup?>(nil)

    private init(
        configuration: ServerConfiguration, storage: any DatabaseStorage, records: any RecordsStorage, schema: Schema, keys: ServerKeys, auth: AuthService,
        sync: SyncService, tables: TableService, accounts: AccountService, emailCodes: EmailCodeService, blobs: BlobService, objects: ObjectStorageService, blobCollector: BlobCollector, hub: RealtimeHub, notifications: NotificationService?,
        activity: ActivitySampler, registry: PrometheusCollectorRegistry, appliedSchemaChanges: [SchemaChange], services: [any Service], logger: Logger
    ) {
        self.activity = activity
        self.records = records
        self.blobs = blobs
        self.objects = objects
        self.blobCollector = blobCollector
        self.registry = registry
        self.keys = keys
        self.auth = auth
        self.sync = sync
        self.tables = tables
        self.accounts = accounts
        self.apple = AppleSignInService(auth: auth, configuration: configuration.apple)
        self.emailCodes = emailCodes
        self.hub = hub
        self.notifications = notifications
        self.devices = DeviceService(
            storage: sync.storage, limits: configuration.sync, proofs: DeviceProofVerifier(secret: keys.secret), logger: logger,
            events: sync.events, contexts: hub.contexts
        )
        self.secrets = SecretsService(storage: sync.storage, limits: configuration.sync, logger: logger, events: sync.events)
        self.spaces = SpaceService(storage: sync.storage, limits: configuration.sync, logger: logger, events: sync.events)
        self.configuration = configuration
        self.storage = storage
        self.schema = schema
        self.appliedSchemaChanges = appliedSchemaChanges
        self.services = services
        self.logger = logger
    }

    /// Deletes tombstones last changed before `cutoff` now, as the hourly collector does; returns how many went.
    @discardableResult
    public func collectTombstones(before cutoff: Date) async throws -> Int {
        try await sync.storage.purgeTombstones(before: cutoff, schema: schema)
    }

    /// Deletes blobs stored before the retention that no live record names, as the hourly collector does; returns how
    /// many went. `now` lets a test move past the retention.
    @discardableResult
    public func collectBlobs(now: Date = Date()) async -> Int {
        await blobCollector.collect(now: now)
    }

    /// One line for the start-up banner: which store the server uses.
    public var storeDescription: String { configuration.resolvedDatabase.description }

    /// Loads the schema, opens the database, applies migrations and schema changes.
    ///
    /// Every failure is a ``ServerStartupError`` with a one-line message.
    public static func prepare(_ configuration: ServerConfiguration, logger: Logger) async throws(ServerStartupError) -> FerryServer {
        if configuration.githubOAuth.isConfigured, let problem = configuration.githubOAuth.tokenURLProblem {
            throw ServerStartupError(.invalidConfiguration, "the GitHub token URL \(problem)")
        }
        let schema: Schema
        do {
            schema = try SchemaParser.load(files: configuration.schemaFiles)
        } catch {
            throw .invalidSchema(error)
        }
        let keys = try await ServerKeys.loadOrCreate(
            dataDirectory: configuration.dataDirectory, configuredSecret: configuration.auth.jwtSecret, issuer: configuration.auth.issuer
        )
        // One SQLite instance hears each event as it is published; PostgreSQL's once its listener connects, and then
        // with a fence, since other instances may be committing too.
        let isSQLite = configuration.resolvedDatabase.isSQLite
        let fence = isSQLite ? nil : EventFence()
        let contexts = configuration.sync.sessionCacheLifetime > .zero ? SessionContextCache(
            lifetime: configuration.sync.sessionCacheLifetime, capacity: configuration.sync.sessionCacheCapacity,
            listening: isSQLite, fence: fence
        ) : nil
        let hub = RealtimeHub(limits: configuration.realtime, contexts: contexts)
        let (storage, records, hubFeed, openedBlobs, poolServices) = try await openStorage(configuration, hub: hub, fence: fence ?? EventFence(), logger: logger)
        let changes: [SchemaChange]
        let blobStore: any BlobStore
        do {
            try await storage.migrate(Migration.server)
            if let postgres = storage as? PostgresStorage { try await postgres.claimBlobLocation(folder: configuration.blobDirectory) }
            // A blob folder beside PostgreSQL is opened (its folders made) only once it is known to be this database's;
            // a failure here closes the database like any other.
            blobStore = try openedBlobs ?? fileBlobs(in: configuration.blobDirectory ?? configuration.dataDirectory)
            changes = try await storage.apply(schema)
        } catch let error as ServerStartupError {
            try? await storage.close()
            throw error
        } catch let error as DestructiveSchemaChangeError {
            try? await storage.close()
            throw .destructive(error)
        } catch {
            try? await storage.close()
            throw ServerStartupError(.databaseUnreachable, "preparing the database failed: \(error)")
        }
        for change in changes {
            logger.info("schema change applied", metadata: ["ferry.schema.change": "\(change.summary)"])
        }
        if configuration.realtime.carriedChangeBytes > 0 {
            hub.carryChanges(with: CarriedChangeReader(storage: records, schema: schema, budget: configuration.realtime.carriedChangeBytes))
        }
        // Everything that can refuse the configuration comes before the notification service, whose HTTP client must
        // be shut down once made.
        let templates: MailTemplates
        do {
            templates = try MailTemplates(directory: configuration.mail.templatesDirectory)
        } catch {
            try? await storage.close()
            throw error
        }
        let registry = PrometheusCollectorRegistry()
        let notifications: NotificationService?
        do {
            notifications = try configuration.notifications.isEnabled
                ? NotificationService(storage: records, configuration: configuration.notifications, registry: registry, logger: logger) : nil
        } catch {
            try? await storage.close()
            throw ServerStartupError(.invalidConfiguration, "\(error)")
        }
        let feed: any RealtimeFeed = notifications.map { NotifyingFeed(base: hubFeed, notifications: $0) } ?? hubFeed
        var auth = await AuthService(storage: storage, keys: keys, schema: schema, configuration: configuration.auth)
        auth.events = feed
        auth.requiresEmailConfirmation = configuration.mail.isConfigured && configuration.mail.confirmsSignUps
        let mailer = configuration.mail.smtp.map {
            Mailer(transport: SMTPClient(configuration: $0), configuration: configuration.mail, logger: logger)
        }
        let emailCodes = EmailCodeService(
            auth: auth, mailer: mailer, configuration: configuration.mail, templates: templates,
            publicURL: configuration.publicURL ?? "http://\(configuration.host):\(configuration.port)", logger: logger
        )
        if configuration.mail.isConfigured, configuration.publicURL == nil {
            logger.warning("mail is on without --public-url: mailed links name http://\(configuration.host):\(configuration.port), which phones may not reach")
        }
        let blobs = BlobService(
            store: blobStore, spaces: records, limits: configuration.blobs, metrics: BlobMetrics(registry: registry), logger: logger
        )
        var sync = SyncService(storage: records, schema: schema, limits: configuration.sync, logger: logger, events: feed)
        sync.blobs = blobs
        sync.metrics = SyncMetrics(registry: registry)
        let activity = ActivitySampler(registry: registry, interval: configuration.console.sampleInterval)
        if configuration.sync.maximumPagesReadAhead > 0 {
            sync.readAhead = PullReadAhead(capacity: configuration.sync.maximumPagesReadAhead, metrics: ReadAheadMetrics(registry: registry))
        }
        let collector = TombstoneCollector(storage: records, schema: schema, retention: configuration.sync.tombstoneRetention, logger: logger)
        let blobCollector = BlobCollector(
            store: blobStore, records: records, objects: records, schema: schema, limits: configuration.blobs, logger: logger
        )
        let objects = ObjectStorageService(
            catalog: records, blobs: blobs, schema: schema, signer: URLTokenSigner(secret: keys.secret, purpose: "storage signed URLs"),
            logger: logger
        )
        return FerryServer(
            configuration: configuration, storage: storage, records: records, schema: schema, keys: keys, auth: auth, sync: sync,
            tables: TableService(storage: records, schema: schema, sync: sync),
            accounts: AccountService(storage: records, auth: auth, blobs: blobStore, schema: schema, events: feed), emailCodes: emailCodes,
            blobs: blobs, objects: objects, blobCollector: blobCollector, hub: hub, notifications: notifications, activity: activity,
            registry: registry, appliedSchemaChanges: changes,
            services: poolServices + [collector, blobCollector, activity] + (mailer.map { [$0] } ?? []) + (notifications.map { [$0] } ?? [])
                + backupServices(configuration, logger: logger),
            logger: logger
        )
    }

    /// The scheduled backups, when asked for and the database is the embedded one in the data folder.
    private static func backupServices(_ configuration: ServerConfiguration, logger: Logger) -> [any Service] {
        guard let interval = configuration.backups.interval, configuration.database == nil else { return [] }
        return [BackupScheduler(dataDirectory: configuration.dataDirectory, interval: interval, keep: configuration.backups.keep, logger: logger)]
    }

    /// The database, how realtime events travel (within this process on SQLite, through `NOTIFY` on PostgreSQL), and
    /// the blob store when it is PostgreSQL; `nil` for files (the data folder, or `--blob-dir`), opened once the
    /// database is ready and has accepted the folder.
    private static func openStorage(
        _ configuration: ServerConfiguration, hub: RealtimeHub, fence: EventFence, logger: Logger
    ) async throws(ServerStartupError) -> (any DatabaseStorage, any RecordsStorage, any RealtimeFeed, (any BlobStore)?, [any Service]) {
        switch configuration.resolvedDatabase {
        case .sqlite(let path):
            guard configuration.blobDirectory == nil else {
                throw ServerStartupError(
                    .invalidConfiguration,
                    "--blob-dir is for PostgreSQL; on SQLite blobs are files in the data folder, where backups include them: drop --blob-dir"
                )
            }
            let storage = try SQLiteStorage(path: path)
            return (storage, storage, LocalRealtimeFeed(hub: hub), nil, [])
        case .postgres(let url):
            let storage = PostgresStorage(url: url, logger: logger)
            let blobs: (any BlobStore)? = configuration.blobDirectory == nil ? PostgresBlobStore(client: storage.client, logger: logger) : nil
            try await storage.checkReachable(timeout: configuration.databaseConnectTimeout)
            let feed = PostgresRealtimeFeed(storage: storage, hub: hub, fence: fence, logger: logger)
            return (storage, storage, feed, blobs, [storage.client, feed])
        }
    }

    private static func fileBlobs(in folder: String) throws(ServerStartupError) -> FileBlobStore {
        do {
            return try FileBlobStore(folder: folder)
        } catch {
            throw ServerStartupError(.dataDirectoryUnusable, "cannot create the blob folders in \(folder): \(error)")
        }
    }
}

/// What the services other than accounts read and write: records, spaces, devices, tables, objects and notifications.
typealias RecordsStorage = SyncService.Storage & TableStorage & AccountStorage & ObjectCatalog & NotificationStorage & ConsoleStorage

extension SchemaChange {
    /// A short description for logs.
    var summary: String {
        switch self {
        case .createCollection(let collection): "created collection \(collection.name)"
        case .addField(let collection, let field): "added field \(collection.name).\(field.name)"
        case .addUniqueKey(let collection, let key): "added unique key \(collection.name)(\(key.joined(separator: ", ")))"
        case .dropUniqueKey(let collection, let key): "dropped unique key \(collection.name)(\(key.joined(separator: ", ")))"
        case .updateDefinition(let collection): "updated definition of \(collection.name)"
        }
    }
}
