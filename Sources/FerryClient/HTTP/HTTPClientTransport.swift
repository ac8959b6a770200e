#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Sends requests with AsyncHTTPClient (SwiftNIO): the SDK's transport on Linux, where it is ``DefaultHTTPTransport``.
///
/// swift-corelibs-foundation's `URLSession` drives libcurl through dispatch sources that wake a manager thread
/// again and again while a request waits: a sixth of the CPU of a push in `ferry-benchmark`'s profile. It also stops
/// the process when a connection ends inside a response head, and resends a POST without its body after a
/// kept-alive connection dies (docs/architecture.md). This transport has neither fault. Its errors are the same
/// `URLError`s as ``URLSessionTransport``'s (`.timedOut`, `.cannotConnectToHost`, `.networkConnectionLost`, …), so
/// callers cannot tell the two apart.
public struct HTTPClientTransport: HTTPTransport {
    /// How long one request may take, from sending to the last byte of the answer.
    public let timeout: Duration
    /// The TLS settings of its connections (and of the realtime stream's): the system's trust, plus a private CA's when
    /// one was given.
    public let tlsConfiguration: TLSConfiguration
    private let client: HTTPClient

    /// Creates a transport whose requests give up after `timeout` (default 30 s, as ``URLSessionTransport``).
    ///
    /// - Parameter trustRootsFile: a PEM file of certificates to trust beside the system's: a server behind a proxy
    ///   whose certificate a private CA signed. On Apple platforms the system's trust settings (a profile) do this.
    public init(timeout: Duration = .seconds(30), trustRootsFile: String? = nil) {
        self.timeout = timeout
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsFile { tls.additionalTrustRoots = [.file(trustRootsFile)] }
        tlsConfiguration = tls
        client = trustRootsFile.map { file in
            Self.clients.withLock { clients in
                if let existing = clients[file] { return existing }
                let made = Self.makeClient(tls)
                clients[file] = made
                return made
            }
        } ?? Self.shared
    }

    /// Sends `request`, throwing `URLError(.timedOut)` once ``timeout`` has passed without a complete answer.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await send(request, timeout: timeout)
    }

    /// Sends `request`, giving up after `timeout` instead of the transport's own.
    func send(_ request: URLRequest, timeout: Duration) async throws -> (Data, HTTPURLResponse) {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw URLError(.unsupportedURL)
        }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] where !Self.setByTheClient.contains(name.lowercased()) {
            outgoing.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        } else if let stream = request.httpBodyStream {
            outgoing.body = .bytes(ByteBuffer(bytes: try Self.readAll(stream)))
        }
        let request = outgoing
        // Our own timer decides, to the millisecond (as for URLSession); the client's deadline is only a backstop.
        let backstop = TimeAmount.seconds(min(max(timeout.components.seconds, 0), 86_400) + 1)
        return try await withRequestTimeout(timeout) {
            do {
                let response = try await client.execute(request, timeout: backstop)
                let body = try await response.body.collect(upTo: .max)
                var fields: [String: String] = [:]
                for (name, value) in response.headers {
                    fields[name] = fields[name].map { "\($0), \(value)" } ?? value
                }
                guard let head = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: fields) else {
                    throw URLError(.badServerResponse)
                }
                return (Data(body.readableBytesView), head)
            } catch {
                throw Self.urlError(for: error)
            }
        }
    }

    /// The bytes of a request's body stream, read into memory as `URLSession` sends them (the SDK's own requests carry
    /// `httpBody`; an app's may carry a stream); `URLError(.requestBodyStreamExhausted)` when the stream fails.
    static func readAll(_ stream: InputStream) throws -> Data {
        stream.open()
        defer { stream.close() }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = stream.read(&chunk, maxLength: chunk.count)
            if count < 0 { throw URLError(.requestBodyStreamExhausted) }
            if count == 0 { return data }
            data.append(contentsOf: chunk[..<count])
        }
    }

    /// Headers the client writes itself from the request (a second copy would make the request malformed).
    private static let setByTheClient: Set<String> = ["content-length", "host", "transfer-encoding"]

    /// One client for the process, as one `URLSession` per transport was: its connections are kept alive and reused.
    /// A failed connection fails the request at once (the sync engine has its own back-off), instead of being retried
    /// until the deadline.
    private static let shared = makeClient(nil)
    /// The clients of transports given trust roots, one per file: AsyncHTTPClient wants each client shut down before
    /// it goes, so they live as long as the process, as ``shared`` does.
    private static let clients = Mutex<[String: HTTPClient]>([:])

    /// A client for the process's lifetime (one per set of trust roots; never shut down, like `URLSession.shared`).
    private static func makeClient(_ tls: TLSConfiguration?) -> HTTPClient {
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// The `URLError` that `error` stands for, as `URLSession` would have reported it; cancellation as it is.
    static func urlError(for error: any Error) -> any Error {
        switch error {
        case is CancellationError, is URLError:
            return error
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: return URLError(.timedOut)
            case .tlsHandshakeTimeout: return URLError(.secureConnectionFailed)
            // Cancelled by our task (the caller, or our timer, which throws `.timedOut` itself); the client cancelling
            // for its own reasons is a lost connection, to be retried, not a cancellation to be passed over.
            case .cancelled, .requestStreamCancelled: return URLError(Task.isCancelled ? .cancelled : .networkConnectionLost)
            case .remoteConnectionClosed: return URLError(.networkConnectionLost)
            case .invalidURL, .emptyHost, .emptyScheme: return URLError(.badURL)
            default: return URLError(.badServerResponse)
            }
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return urlError(for: first.error) }
            return URLError(error.dnsAError != nil || error.dnsAAAAError != nil ? .cannotFindHost : .cannotConnectToHost)
        case is SocketAddressError:
            return URLError(.cannotFindHost)
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, EADDRNOTAVAIL: return URLError(.cannotConnectToHost)
            case ENETUNREACH, ENETDOWN: return URLError(.notConnectedToInternet)
            case ETIMEDOUT: return URLError(.timedOut)
            default: return URLError(.networkConnectionLost)
            }
        case let error as ChannelError:
            if case .connectTimeout = error { return URLError(.timedOut) }
            return URLError(.networkConnectionLost)
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return URLError(.secureConnectionFailed)
        case is HTTPParserError:
            return URLError(.badServerResponse)
        default:
            return URLError(.unknown)
        }
    }
}
#endif
