// swift-tools-version:6.2
import PackageDescription

/// One set of settings for every target, tests included (STYLE.md §2).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "FerryCore", targets: ["FerryCore"]),
        .library(name: "FerrySecurity", targets: ["FerrySecurity"]),
        .library(name: "FerryServer", targets: ["FerryServer"]),
        .library(name: "FerryClient", targets: ["FerryClient"]),
        .library(name: "FerryVault", targets: ["FerryVault"]),
        .library(name: "FerryTesting", targets: ["FerryTesting"]),
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The APNs stand-in in FerryTesting: an HTTP/2 server over TLS, with a test CA (both already in the graph).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // `swift package generate-documentation` for the DocC catalogs (docs/docc.md); a command plugin, built only when run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "FerryCore",
            dependencies: [.product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        // FerryCore's value codec bound to GRDB, for the two SQLite users: the server's storage and the device store.
        .target(
            name: "FerryGRDB",
            dependencies: [
                "FerryCore", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C functions, which GRDB itself binds with: the row writer binds through them directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // System calls Swift's Glibc module leaves out (sync_file_range), for FerrySecurity's FileDurability.
        .target(name: "CFerrySystem"),
        .target(
            name: "FerrySecurity",
            dependencies: [
                "CFerrySystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FerryServer",
            dependencies: [
                "FerryCore",
                "FerryGRDB",
                "FerrySecurity",
                .product(name: "Hummingbird", package: "hummingbird"),
                // The HTTP/1.1 channel with the stream's upgrade (UpgradableHTTPChannel), served by a NIO handler.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The SMTP client's connections (ClientBootstrap).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // APNs speaks HTTP/2 only; the client already builds for FerryClient on Linux.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["Console/Assets"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedResourcesPlugin"]
        ),
        .target(
            name: "FerryClient",
            dependencies: [
                "FerryCore",
                "FerryGRDB",
                "FerrySecurity",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // The realtime stream's TLS settings follow the transport's (a private CA's trust roots).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The HTTP transport on Linux (HTTPClientTransport): swift-corelibs-foundation's URLSession costs a
                // sixth of a push's CPU there and has the faults docs/architecture.md lists. Apple platforms keep URLSession.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(name: "CLibGit2", pkgConfig: "libgit2", providers: [.apt(["libgit2-dev"])]),
        .target(
            name: "FerryVault",
            dependencies: [
                "CLibGit2", "FerryCore", "FerrySecurity",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FerryTesting",
            dependencies: [
                "FerryServer",
                // The Apple stand-in signs tokens with RSA as Apple does.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                "FerryCore",
                "FerrySecurity",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryServer",
                "FerryClient",
                "FerryVault",
                "FerrySecurity",
                "FerryCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // `ferry serve` owns the signals that stop the server (the library owns none).
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ferry-benchmark",
            dependencies: [
                "FerryClient",
                "FerrySecurity",
                "FerryServer",
                "FerryTesting",
                "FerryCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The table benchmark's HTTP client (the one FerryClient uses on Linux).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The realtime benchmark's bare streams: a WebSocket handler on an event loop each (BareStream).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Benchmarks/SyncBenchmark",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "EmbedResources",
            path: "Plugins/EmbedResourcesTool",
            swiftSettings: swiftSettings
        ),
        .plugin(
            name: "EmbedResourcesPlugin",
            capability: .buildTool(),
            dependencies: ["EmbedResources"]
        ),
        .testTarget(
            name: "FerryCoreTests",
            dependencies: ["FerryCore", "FerryTesting", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryServerTests",
            dependencies: [
                "FerryServer",
                "FerrySecurity",
                "FerryTesting",
                "FerryCore",
                .product(name: "Yams", package: "Yams"),
                // The tests' HTTP client: swift-corelibs-foundation's URLSession cost more CPU than the server under test.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // Route tests in process (`app.test(.router)`): no socket, no HTTP client.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerrySecurityTests",
            dependencies: ["FerrySecurity"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryClientTests",
            dependencies: [
                "FerryClient", "FerrySecurity", "FerryTesting", "FerryCore",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryVaultTests",
            dependencies: ["FerryVault", "FerrySecurity", "FerryServer", "FerryTesting", "FerryCore"],
            exclude: ["Support/git_http_server.py"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryCLITests",
            // FerryClient: the load-balancer test's app, in front of real `ferry serve` processes.
            dependencies: ["ferry", "FerryTesting", "FerryServer", "FerryCore", "FerryClient"],
            swiftSettings: swiftSettings
        ),
    ]
)
