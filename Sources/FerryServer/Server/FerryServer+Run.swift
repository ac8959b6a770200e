import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

extension FerryServer {
    /// Builds the router: middleware outermost first, then every route group.
    func makeRouter() -> Router<FerryRequestContext> {
        let router = Router(context: FerryRequestContext.self)
        router.add(middleware: RequestLoggingMiddleware())
        router.add(middleware: ClientAddressMiddleware(proxies: configuration.trustedProxies))
        // Browsers running supabase-js send a preflight before every cross-origin call.
        router.add(middleware: CORSMiddleware(
            allowOrigin: .originBased,
            allowHeaders: [
                .accept, .authorization, .contentType, .origin, .apiKey, .clientInfo, .supabaseAPIVersion, .requestID, .uploadOffset,
                .uploadLength, .tusResumable, HTTPField.Name("Upload-Metadata")!, HTTPField.Name("x-upsert")!, .cacheControl,
            ],
            allowMethods: [.get, .post, .put, .patch, .delete, .head, .options],
            exposedHeaders: ["X-Request-Id", "Retry-After", "X-Supabase-Api-Version", "Upload-Offset", "Upload-Length", "Tus-Resumable", "Location"],
            maxAge: .hours(1)
        ))
        router.add(middleware: MetricsMiddleware(registry: registry))
        router.add(middleware: ErrorMiddleware(tail: errorTail))
        router.add(middleware: RequestDeadlineMiddleware(deadline: configuration.requestDeadline))
        OperationsRoutes(storage: storage, registry: registry, healthTimeout: configuration.healthTimeout, metricsToken: configuration.metricsToken)
            .register(on: router)
        // Every authenticated group has the one ``Authenticator``; every group but streamed uploads runs each request
        // under the request deadline (``DeadlineGroup``: the body within it, then the work within a fresh one).
        let authenticator = Authenticator(auth: auth, devices: devices, keys: keys)
        func authenticated(_ group: RouterGroup<FerryRequestContext>, _ authenticator: Authenticator = authenticator) -> RouterGroup<AuthenticatedContext> {
            group.add(middleware: authenticator).group(context: AuthenticatedContext.self)
        }
        // Sign-up and sign-in: the anon key, then the attempt limit, then (password sign-ins only) the session presented.
        var signingIn = authenticator
        signingIn.requirement = .presented(when: AuthRoutes.mayPresentCaller)
        let authRoutes = AuthRoutes(service: auth, accounts: accounts, apple: apple, emailCodes: emailCodes)
        authRoutes.register(
            anonymous: DeadlineGroup(router.group("auth/v1").add(middleware: APIKeyMiddleware(keys: keys))
                .add(middleware: AttemptLimitMiddleware(limiter: auth.limits.attemptsPerClient, counts: AuthRoutes.isSignInAttempt))
                .add(middleware: signingIn)),
            authenticated: DeadlineGroup(authenticated(router.group("auth/v1")))
        )
        authRoutes.register(open: DeadlineGroup(router.group("auth/v1")))
        let admin = router.group("auth/v1/admin").add(middleware: ServiceRoleMiddleware(keys: keys))
        AdminRoutes(admin: AdminService(auth: auth, accounts: accounts, emailCodes: emailCodes)).register(on: DeadlineGroup(admin))
        let exportService = ExportService(
            auth: auth, tables: tables, devices: self.sync.storage, blobs: blobs.store, schema: schema,
            folder: configuration.dataDirectory + "/exports"
        )
        let exports = ExportRoutes(exports: exportService)
        exports.register(admin: admin)
        let sync = DeadlineGroup(authenticated(router.group("sync/v1")))
        exports.register(user: authenticated(router.group("sync/v1")))
        // The pull's authentication also reads the caller's spaces, in the same round trip; no other route needs them.
        var pulling = authenticator
        pulling.readsSpaces = true
        SyncRoutes(sync: self.sync).register(on: sync, pulling: DeadlineGroup(authenticated(router.group("sync/v1"), pulling)))
        SpaceRoutes(spaces: spaces).register(on: sync)
        DeviceRoutes(devices: devices, secrets: secrets).register(on: sync)
        NotificationRoutes(notifications: notifications).register(on: sync)
        ProfileRoutes(auth: auth).register(on: sync)
        BlobRoutes(blobs: blobs).register(on: sync, uploads: authenticated(router.group("sync/v1")))
        // PostgREST's tables: errors in PostgREST's shape; the service-role key is a caller too.
        let tableGroup = router.group("rest/v1").add(middleware: TableErrorMiddleware())
            .add(middleware: TableAuthenticator(auth: auth, devices: devices, keys: keys)).group(context: TableContext.self)
        TableRoutes(tables: tables).register(on: DeadlineGroup(tableGroup))
        // Supabase Storage: errors in Storage's shape; signed URLs and public buckets need no session.
        let storageRoutes = StorageRoutes(storage: objects)
        let storage = router.group("storage/v1").add(middleware: StorageErrorMiddleware())
        storageRoutes.register(open: DeadlineGroup(storage), openUploads: storage)
        let storageSignedIn = DeadlineGroup(authenticated(storage)), storageUploads = authenticated(storage)
        storageRoutes.register(authenticated: storageSignedIn, uploads: storageUploads)
        ResumableUploadRoutes(storage: objects, publicURL: configuration.publicURL).register(on: storageSignedIn, uploads: storageUploads)
        OAuthRoutes(configuration: configuration.githubOAuth, keys: keys, logger: logger).register(on: router)
        var streaming = authenticator
        streaming.credentials = .headersOrQuery
        StreamRoutes(
            service: StreamService(
                auth: auth, devices: devices, storage: self.sync.storage, hub: hub, metrics: StreamMetrics(registry: registry),
                notifications: notifications, logger: logger
            )
        ).register(on: router.group("sync/v1/stream").add(middleware: StreamAdmission.Mark(hub: hub)).add(middleware: streaming)
            .add(middleware: StreamAdmission(hub: hub)))
        registerConsole(on: router, exports: exportService)
        return router
    }

    /// `/console` and its API, over the same services as every other front-end.
    private func registerConsole(on router: Router<FerryRequestContext>, exports: ExportService) {
        let operators = OperatorService(storage: storage, hasher: auth.hasher, secret: keys.secret, logger: logger)
        let admin = AdminService(auth: auth, accounts: accounts, emailCodes: emailCodes)
        let hub = self.hub
        let console = ConsoleService(
            storage: records, auth: auth, admin: admin, devices: devices, operators: operators, schema: schema,
            blobs: blobs.store, activity: activity, errors: errorTail, configuration: configuration, openStreams: { hub.count }
        )
        ConsoleRoutes(
            console: console, tables: tables, exports: exports,
            backups: ConsoleBackups(dataDirectory: configuration.dataDirectory, isEmbedded: configuration.resolvedDatabase.engineName == "sqlite")
        ).register(on: router, operators: operators, secureCookies: configuration.publicURL?.hasPrefix("https://") == true)
    }

    /// Serves until the graceful shutdown of the `ServiceGroup` running it (in-flight requests finish), a call to
    /// ``shutdown()``, or the cancellation of the calling task. `onListening` runs once the socket is bound.
    ///
    /// The server is a library: it owns no signals. An application runs it in its own `ServiceGroup` with the
    /// signals it wants (as `ferry serve` does with SIGTERM and SIGINT, through ``service(onListening:)``), as
    /// swift-service-lifecycle asks of libraries; its inner group follows the outer one's graceful shutdown.
    ///
    /// Throws ``ServerStartupError`` when the address cannot be bound.
    public func run(onListening: @escaping @Sendable (ListeningAddress) async -> Void = { _ in }) async throws {
        let host = configuration.host
        let router = makeRouter()
        // A heartbeat shorter than the idle timeout, so a client answering pings never looks idle to a proxy.
        let heartbeat = min(configuration.realtime.heartbeatInterval, configuration.idleTimeout)
        let application = Application(
            router: router,
            server: UpgradableHTTPChannel.builder(router: router, idleTimeout: configuration.idleTimeout, heartbeat: StreamHeartbeat(period: TimeAmount(heartbeat))),
            // A listen queue of 4,096 (Linux's usual somaxconn) rather than Hummingbird's 256: when an instance restarts,
            // its devices all reconnect at once, and a busy server accepts them a little late rather than resetting them.
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: "Ferry", backlog: 4096),
            onServerRunning: { channel in
                await onListening(ListeningAddress(host: host, port: channel.localAddress?.port ?? 0))
            },
            logger: logger
        )
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) } + [
                    .init(service: application, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                    // Last, so shut down first: streams close with 1001 before the HTTP server closes their connections.
                    .init(service: StreamDrain(hub: hub), successTerminationBehavior: .ignore),
                ],
                logger: logger
            )
        )
        runningGroup.withLock { $0 = group }
        defer {
            runningGroup.withLock { $0 = nil }
            hub.closeAll()
        }
        do {
            try await group.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ServerStartupError(.addressInUse, "\(host):\(configuration.port) is already in use; stop the other process or pass --port")
        } catch let error as IOError where [EADDRNOTAVAIL, EACCES].contains(error.errnoCode) {
            throw ServerStartupError(.cannotListen, "cannot listen on \(host):\(configuration.port): \(error.description)")
        }
        try? await storage.close()
    }

    /// The server as a `Service`, for an application's `ServiceGroup`; `onListening` runs once the socket is bound.
    public func service(onListening: @escaping @Sendable (ListeningAddress) async -> Void = { _ in }) -> some Service {
        ServerService(server: self, onListening: onListening)
    }

    /// Stops a running server as SIGTERM would: stop accepting, finish in-flight requests, return from ``run(onListening:)``.
    public func shutdown() async {
        await runningGroup.withLock { $0 }?.triggerGracefulShutdown()
    }
}

/// ``FerryServer`` as a `Service` (``FerryServer/service(onListening:)``).
private struct ServerService: Service {
    let server: FerryServer
    let onListening: @Sendable (FerryServer.ListeningAddress) async -> Void

    func run() async throws {
        try await server.run(onListening: onListening)
    }
}
