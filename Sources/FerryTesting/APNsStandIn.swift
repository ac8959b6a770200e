import Crypto
import FerrySecurity
import FerryServer
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A local stand-in for the provider API of Apple's Push Notification service (`api.push.apple.com`), for tests of the
/// server's push sender: Apple's service, and a team's signing key, cannot exist here.
///
/// Written from Apple's published documentation ("Sending notification requests to APNs", "Establishing a
/// token-based connection to APNs", "Handling notification responses from APNs"), it shows a provider what APNs does:
/// HTTP/2 over TLS (ALPN `h2`) on loopback, many streams on one connection, behind a certificate from a test authority
/// (``caFile``); `POST /3/device/<token>` authenticated by a provider token (an ES256 JWT) signed with the key in
/// ``keyFile``; and Apple's status codes with their `{"reason": …}` bodies. A request is checked in this order, and
/// the first failure answered: the ``Mode`` (503, 429), method (405 `MethodNotAllowed`) and path (404 `BadPath`,
/// 400 `MissingDeviceToken`), repeated `apns-*` headers (400 `DuplicateHeaders`), the provider token (403
/// `MissingProviderToken`, `InvalidProviderToken`, `ExpiredProviderToken`), the topic (400 `MissingTopic`,
/// `TopicDisallowed`), the push type (400 `InvalidPushType`), the other `apns-*` headers (400 `BadPriority`,
/// `BadExpirationDate`, `BadCollapseId`, `BadMessageId`), the payload (413 `PayloadTooLarge` over 4096 bytes, 400
/// `PayloadEmpty`), the device token (400 `BadDeviceToken` unless 64 hex digits) and whether it was unregistered (410
/// `Unregistered`). Every response carries `apns-id`.
///
/// ```swift
/// let apns = try await APNsStandIn.start()
/// // the server gets apns.url, apns.caFile, apns.keyFile, apns.keyID, apns.teamID and apns.topic
/// let requests = await apns.waitForRequests(count: 1)
/// #expect(requests.first?.providerTokenIsValid == true)
/// await apns.shutdown()
/// ```
public final class APNsStandIn: Sendable {
    /// One notification request as received.
    public struct Request: Sendable, Hashable {
        /// From the path, `/3/device/<token>`; empty when the path is not one.
        public var deviceToken: String
        /// The `:method`.
        public var method: String
        /// The headers by lowercased name, without HTTP/2's pseudo-headers; a repeated one's values joined by `, `.
        public var headers: [String: String]
        /// The payload, as received.
        public var body: Data
        /// Whether `authorization` held a provider token APNs would accept: ES256, signed with ``APNsStandIn/keyFile``'s
        /// key, naming ``APNsStandIn/keyID`` and ``APNsStandIn/teamID``, issued within the hour.
        public var providerTokenIsValid: Bool

        /// The body as a JSON object; `nil` when it is not one.
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }
    }

    /// How the stand-in answers, whatever the request.
    public enum Mode: Sendable, Hashable {
        /// As APNs does when all is well (each request still checked).
        case normal
        /// `503 {"reason":"ServiceUnavailable"}` to every request.
        case unavailable
        /// `429 {"reason":"TooManyRequests"}` to every request.
        case tooManyRequests
        /// Answers as ``normal`` after this pause (the event loop is not blocked meanwhile).
        case slow(Duration)
    }

    /// `https://127.0.0.1:PORT`.
    public var url: String { "https://127.0.0.1:\(port)" }
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// A PEM file with the certificate of the test authority that signed the stand-in's TLS certificate (for
    /// `127.0.0.1` and `localhost`): the server's `--apns-ca-file`.
    public let caFile: URL
    /// The team's signing key, P-256 in PKCS#8 PEM exactly as Apple's `AuthKey_<keyID>.p8` files are (mode 0600): the
    /// server's `--apns-key-file`.
    public let keyFile: URL
    /// The signing key's id, 10 characters like Apple's.
    public let keyID: String
    /// The team's id, the provider token's issuer.
    public let teamID: String
    /// The one `apns-topic` (an app's bundle id) accepted.
    public let topic: String

    private let core: APNsStandInCore
    private let listener: any Channel
    private let folder: TemporaryFolder

    private init(port: Int, keyFile: URL, caFile: URL, core: APNsStandInCore, listener: any Channel, folder: TemporaryFolder) {
        (self.port, self.keyFile, self.caFile) = (port, keyFile, caFile)
        (keyID, teamID, topic) = (core.tokenCheck.keyID, core.tokenCheck.teamID, core.topic)
        (self.core, self.listener, self.folder) = (core, listener, folder)
    }

    /// Makes a signing key and a TLS certificate, writes ``keyFile`` and ``caFile``, and listens on a free loopback port.
    public static func start() async throws -> APNsStandIn {
        let folder = try TemporaryFolder()
        do {
            let (keyID, teamID, topic) = ("STANDINKEY", "STANDTEAM1", "com.example.ferry-notes")
            let signingKey = P256.Signing.PrivateKey()
            let keyFile = folder.url.appending(path: "AuthKey_\(keyID).p8")
            try write(signingKey.pemRepresentation, to: keyFile, permissions: 0o600)
            let authority = try TestCertificateAuthority(commonName: "Ferry APNs stand-in test CA")
            let caFile = folder.url.appending(path: "apns-stand-in-ca.pem")
            try write(authority.certificatePEM, to: caFile, permissions: 0o644)
            let tls = try tlsContext(authority.issueLoopbackServerCertificate())
            let http2 = connectionConfiguration

            let core = APNsStandInCore(
                topic: topic, tokenCheck: ProviderTokenCheck(publicKey: signingKey.publicKey, keyID: keyID, teamID: teamID)
            )
            let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { connection in
                    connection.eventLoop.makeCompletedFuture {
                        guard core.admit(connection) else {
                            connection.close(promise: nil)
                            return
                        }
                        connection.closeFuture.whenComplete { _ in core.forget(connection) }
                        try connection.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                        // Only `h2` is offered, as APNs does: what follows the handshake is HTTP/2.
                        _ = try connection.pipeline.syncOperations.configureHTTP2Pipeline(
                            mode: .server, connectionConfiguration: http2, streamConfiguration: .init()
                        ) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(APNsStandInStreamHandler(core: core))
                            }
                        }
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = listener.localAddress?.port else {
                try? await listener.close()
                throw TestSupportError("the APNs stand-in has no local port")
            }
            return APNsStandIn(port: port, keyFile: keyFile, caFile: caFile, core: core, listener: listener, folder: folder)
        } catch {
            folder.remove()
            throw error
        }
    }

    /// Points a server configuration at this stand-in: its key, team, topic, both APNs URLs and its CA.
    public func configure(_ configuration: inout ServerConfiguration) {
        configuration.notifications.keyFile = keyFile.path
        configuration.notifications.keyID = keyID
        configuration.notifications.teamID = teamID
        configuration.notifications.topic = topic
        configuration.notifications.productionURL = url
        configuration.notifications.sandboxURL = url
        configuration.notifications.caFile = caFile.path
    }

    /// Runs `body` with a started stand-in, and shuts it down afterwards.
    public static func with<Result>(_ body: (APNsStandIn) async throws -> Result) async throws -> Result {
        let standIn = try await start()
        do {
            let result = try await body(standIn)
            await standIn.shutdown()
            return result
        } catch {
            await standIn.shutdown()
            throw error
        }
    }

    /// Every request received so far, in arrival order.
    public func received() -> [Request] {
        core.received()
    }

    /// Waits until at least `count` requests have arrived or `timeout` passes (or the task is cancelled); returns
    /// ``received()`` either way, for the test to check.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async -> [Request] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let requests = received()
            if requests.count >= count || ContinuousClock.now >= deadline { return requests }
            // Requests arrive on NIO's threads; looking again shortly is simpler than a list of waiters, and soon enough.
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return received() }
        }
    }

    /// Answers every request from now on as `mode` says.
    public func setMode(_ mode: Mode) {
        core.setMode(mode)
    }

    /// Answers `token` `410 {"reason":"Unregistered","timestamp":<ms>}` from now on, as APNs does once an app is
    /// uninstalled.
    public func unregister(token: String) {
        core.unregister(token: token)
    }

    /// Stops listening, closes every connection, and deletes ``keyFile`` and ``caFile``.
    public func shutdown() async {
        try? await listener.close()
        for connection in core.closeAll() {
            connection.close(promise: nil)
            try? await connection.closeFuture.get()
        }
        folder.remove()
    }

    /// HTTP/2 settings as a busy provider needs: APNs allows many concurrent streams, NIO's default is 100.
    private static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = nioDefaultSettings.map { setting in
            setting.parameter == .maxConcurrentStreams ? HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000) : setting
        }
        return configuration
    }

    private static func tlsContext(_ server: (certificatePEM: String, keyPEM: String)) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(server.certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(server.keyPEM.utf8), format: .pem))
        )
        configuration.applicationProtocols = ["h2"]
        return try NIOSSLContext(configuration: configuration)
    }

    /// Writes `text` to `file` and gives it `permissions` (0600 for the key, as an operator keeps a real one).
    private static func write(_ text: String, to file: URL, permissions: Int) throws {
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path())
    }
}

extension APNsStandIn {
    /// Checks a provider token as APNs does: `bearer <header>.<claims>.<signature>`, base64url without padding, with
    /// header `{"alg":"ES256","kid":…}`, claims `{"iss":…,"iat":…}` and the raw 64-byte r‖s ECDSA P-256 SHA-256 signature.
    struct ProviderTokenCheck: Sendable {
        enum Verdict: Sendable, Hashable {
            case valid, missing, invalid, expired
        }

        let publicKey: P256.Signing.PublicKey
        let keyID: String
        let teamID: String

        private struct Header: Decodable {
            var alg: String
            var kid: String
        }

        private struct Claims: Decodable {
            var iss: String
            var iat: Int
        }

        /// `authorization`'s verdict at `now`: expired when signed right but issued over an hour ago; invalid when
        /// anything else is wrong, an `iat` more than a minute ahead included.
        func verdict(authorization: String?, now: Date) -> Verdict {
            guard let authorization else { return .missing }
            let words = authorization.split(separator: " ", maxSplits: 1)
            guard words.count == 2, words[0].lowercased() == "bearer" else { return .invalid }
            let parts = words[1].split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts.joined().contains("="),
                  let header = Self.decode(Header.self, parts[0]), let claims = Self.decode(Claims.self, parts[1]),
                  header.alg == "ES256", header.kid == keyID, claims.iss == teamID,
                  let signatureBytes = Data(base64URLEncoded: String(parts[2])),
                  let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
                  publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
            else { return .invalid }
            let age = now.timeIntervalSince1970 - Double(claims.iat)
            if age > 3600 { return .expired }
            return age < -60 ? .invalid : .valid
        }

        private static func decode<Part: Decodable>(_ type: Part.Type, _ text: Substring) -> Part? {
            Data(base64URLEncoded: String(text)).flatMap { try? JSONDecoder().decode(type, from: $0) }
        }
    }
}

/// What the stand-in answers one request.
struct APNsStandInReply: Sendable {
    var status: Int
    var apnsID: String
    /// Apple's `reason`; `nil` for a success, which has no body.
    var reason: String?
    /// For `410`: when the token was found unregistered, in milliseconds since 1970.
    var timestamp: Int?
    /// How long to wait before answering (``APNsStandIn/Mode/slow(_:)``).
    var delay: Duration?

    /// The JSON body: `{"reason":…}`, with `timestamp` for a `410`.
    var body: String? {
        guard let reason else { return nil }
        return timestamp.map { #"{"reason":"\#(reason)","timestamp":\#($0)}"# } ?? #"{"reason":"\#(reason)"}"#
    }
}

/// The state a stand-in's connections share, and the checks each request goes through, in Apple's terms.
final class APNsStandInCore: Sendable {
    private struct State {
        var mode = APNsStandIn.Mode.normal
        var received: [APNsStandIn.Request] = []
        /// Unregistered device tokens (lowercased), and when, in milliseconds since 1970.
        var unregistered: [String: Int] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
        var isShutDown = false
    }

    /// Apple's push types (`apns-push-type`).
    static let pushTypes: Set = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk",
    ]
    /// The largest payload APNs accepts, in bytes.
    static let maximumPayload = 4096

    let topic: String
    let tokenCheck: APNsStandIn.ProviderTokenCheck
    private let state = Mutex(State())

    init(topic: String, tokenCheck: APNsStandIn.ProviderTokenCheck) {
        self.topic = topic
        self.tokenCheck = tokenCheck
    }

    func received() -> [APNsStandIn.Request] {
        state.withLock { $0.received }
    }

    func setMode(_ mode: APNsStandIn.Mode) {
        state.withLock { $0.mode = mode }
    }

    func unregister(token: String) {
        let now = Int(Date().timeIntervalSince1970 * 1000)
        state.withLock { $0.unregistered[token.lowercased()] = now }
    }

    /// Keeps a connection just accepted, to close at shutdown; `false` once shut down.
    func admit(_ connection: any Channel) -> Bool {
        state.withLock { state in
            guard !state.isShutDown else { return false }
            state.connections[ObjectIdentifier(connection)] = connection
            return true
        }
    }

    func forget(_ connection: any Channel) {
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Refuses connections from now on, and returns those open.
    func closeAll() -> [any Channel] {
        state.withLock { state in
            state.isShutDown = true
            return Array(state.connections.values)
        }
    }

    /// Records a complete request (`headers` as received, pseudo-headers included) and decides its answer.
    func answer(_ headers: HPACKHeaders, body: Data, now: Date = Date()) -> APNsStandInReply {
        let method = headers.first(name: ":method") ?? ""
        let path = (headers.first(name: ":path") ?? "").prefix { character in character != "?" }
        let deviceToken = path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)) : ""
        var fields: [String: String] = [:]
        var repeated: Set<String> = []
        for (name, value, _) in headers where !name.hasPrefix(":") {
            let name = name.lowercased()
            if fields[name] != nil { repeated.insert(name) }
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        let token = tokenCheck.verdict(authorization: fields["authorization"], now: now)
        let request = APNsStandIn.Request(
            deviceToken: deviceToken, method: method, headers: fields, body: body, providerTokenIsValid: token == .valid
        )
        let (mode, unregisteredAt) = state.withLock { state in
            state.received.append(request)
            return (state.mode, state.unregistered[deviceToken.lowercased()])
        }
        // APNs echoes the request's `apns-id` when it is a UUID, and makes one up otherwise.
        let apnsID = fields["apns-id"].flatMap { UUID(uuidString: $0) == nil ? nil : $0 } ?? UUID().uuidString.lowercased()
        var reply = APNsStandInReply(status: 200, apnsID: apnsID)
        switch mode {
        case .normal: break
        case .unavailable: return APNsStandInReply(status: 503, apnsID: apnsID, reason: "ServiceUnavailable")
        case .tooManyRequests: return APNsStandInReply(status: 429, apnsID: apnsID, reason: "TooManyRequests")
        case .slow(let delay): reply.delay = delay
        }
        let refusal = firstRefusal(
            method: method, path: path, deviceToken: deviceToken, fields: fields, repeated: repeated, token: token, body: body
        )
        if let refusal {
            reply.status = refusal.status
            reply.reason = refusal.reason
        } else if let unregisteredAt {
            reply.status = 410
            reply.reason = "Unregistered"
            reply.timestamp = unregisteredAt
        }
        return reply
    }

    /// The first check `request` fails, as Apple's status and reason; `nil` when it passes them all.
    private func firstRefusal(
        method: String, path: Substring, deviceToken: String, fields: [String: String], repeated: Set<String>,
        token: APNsStandIn.ProviderTokenCheck.Verdict, body: Data
    ) -> (status: Int, reason: String)? {
        guard method == "POST" else { return (405, "MethodNotAllowed") }
        guard path.hasPrefix("/3/device/"), !deviceToken.contains("/") else { return (404, "BadPath") }
        guard !deviceToken.isEmpty else { return (400, "MissingDeviceToken") }
        if repeated.contains(where: { $0 == "authorization" || $0.hasPrefix("apns-") }) { return (400, "DuplicateHeaders") }
        switch token {
        case .valid: break
        case .missing: return (403, "MissingProviderToken")
        case .invalid: return (403, "InvalidProviderToken")
        case .expired: return (403, "ExpiredProviderToken")
        }
        guard let requestTopic = fields["apns-topic"] else { return (400, "MissingTopic") }
        guard requestTopic == topic else { return (400, "TopicDisallowed") }
        guard let pushType = fields["apns-push-type"], Self.pushTypes.contains(pushType) else { return (400, "InvalidPushType") }
        if let priority = fields["apns-priority"], !["1", "5", "10"].contains(priority) { return (400, "BadPriority") }
        if let expiration = fields["apns-expiration"], Int(expiration) == nil { return (400, "BadExpirationDate") }
        if let collapseID = fields["apns-collapse-id"], collapseID.utf8.count > 64 { return (400, "BadCollapseId") }
        if let apnsID = fields["apns-id"], UUID(uuidString: apnsID) == nil { return (400, "BadMessageId") }
        guard body.count <= Self.maximumPayload else { return (413, "PayloadTooLarge") }
        // Apple names no reason for a body that is not JSON; the nearest one keeps a sender's garbage from passing.
        guard !body.isEmpty, (try? JSONSerialization.jsonObject(with: body)) is [String: Any] else { return (400, "PayloadEmpty") }
        guard Self.isDeviceToken(deviceToken) else { return (400, "BadDeviceToken") }
        return nil
    }

    /// 64 hex digits, the form of the 32-byte tokens devices register.
    private static func isDeviceToken(_ token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
    }
}

/// One HTTP/2 stream: collects the request's head and body, then answers with the core's reply, later when the mode
/// is slow (scheduled on the event loop, never blocking it).
final class APNsStandInStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let core: APNsStandInCore
    private var head: HPACKHeaders?
    private var body = ByteBuffer()
    private var isAnswered = false

    init(core: APNsStandInCore) {
        self.core = core
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            // A second HEADERS frame is trailers: only its end of stream matters.
            if head == nil { head = headers.headers }
            if headers.endStream { answer(context: context) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data { body.writeImmutableBuffer(buffer) }
            if data.endStream { answer(context: context) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(context: ChannelHandlerContext) {
        guard !isAnswered, let head else { return }
        isAnswered = true
        let reply = core.answer(head, body: Data(body.readableBytesView))
        guard let delay = reply.delay else { return write(reply, context: context) }
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { self.write(reply, context: context) }
    }

    private func write(_ reply: APNsStandInReply, context: ChannelHandlerContext) {
        var headers = HPACKHeaders([(":status", String(reply.status)), ("apns-id", reply.apnsID)])
        guard let body = reply.body else {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
            return
        }
        let buffer = ByteBuffer(string: body)
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(buffer.readableBytes))
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
    }
}
