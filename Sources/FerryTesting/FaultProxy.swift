import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on loopback that breaks connections on purpose, to test how clients and the server behave on a
/// bad network.
///
/// Each accepted connection is forwarded to `127.0.0.1:targetPort`. While faults are on, the proxy decides the fate
/// of each request (of each connection, and again of each request a kept-alive connection carries), with a generator
/// seeded from ``Configuration/seed``: it passes through untouched, is delayed (it reaches the server a few
/// milliseconds to ``Configuration/maximumDelay`` late), or its connection is dropped part-way: after part of the
/// request (or right after all of it, before any of the answer, when the request is shorter than the chosen byte
/// count) or after the response's head and part of its body. A drop closes both sides, so the client sees the
/// connection end while the server may or may not have committed the request. The sequence of decisions follows from the seed; which request
/// gets which depends on the order they arrive in.
///
/// What Linux clients do with these faults (swift-corelibs-foundation's `URLSession`, on libcurl), seen through this
/// proxy: a connection that ends inside a response head stops the whole process (swiftlang/swift-corelibs-foundation#5285),
/// so response drops leave heads whole unless ``Configuration/cutsResponseHeads`` is on; and a POST whose kept-alive
/// connection dies before any answer is retried on a new connection with its headers but without its body, which
/// then waits for the request's timeout.
///
/// ```swift
/// let proxy = try await FaultProxy.start(forwardingTo: server.baseURL.port!, configuration: .init(seed: seed))
/// let endpoint = ServerEndpoint(baseURL: proxy.baseURL, apiKey: anonKey)   // clients talk to the proxy
/// proxy.setFaulty(true)                                                    // … syncs that may fail …
/// proxy.setFaulty(false)                                                   // a clean final round
/// await proxy.stop()
/// ```
public final class FaultProxy: Sendable {
    /// How often and how the proxy breaks connections.
    public struct Configuration: Sendable, Hashable {
        /// The seed of the generator that decides each connection's fate.
        public var seed: UInt64
        /// The share of requests whose connection is dropped part-way (half during the request, half during the
        /// response).
        public var faultRate = 0.1
        /// The share of requests delayed.
        public var delayRate = 0.2
        /// The shortest delay of a delayed request.
        public var minimumDelay: Duration = .milliseconds(2)
        /// The longest delay of a delayed request.
        public var maximumDelay: Duration = .milliseconds(100)
        /// A dropped connection is closed after 1 to this many bytes of the request, or 0 to this many bytes of the
        /// response's body, went through.
        public var maximumDropOffset = 1024
        /// Whether a response drop may also cut the response's head (status line and headers) short.
        ///
        /// Off by default: on Linux, `URLSession` (swift-corelibs-foundation) stops the whole process with
        /// "Transfer completed, but there's no response" when a connection ends inside a response head
        /// (swiftlang/swift-corelibs-foundation#5285), so a test of `URLSessionTransport` that turns this on crashes
        /// instead of failing. `HTTPClientTransport`, the SDK's default on Linux, fails such a request like any
        /// dropped connection: the fault convergence test turns this on.
        public var cutsResponseHeads = false
        /// Whether faults are on when the proxy starts.
        public var isFaulty = true
        /// After this many requests under faults with no request drop decided yet, the next one is dropped during
        /// its request (which always drops it); once one was, chance alone decides. A response drop passes when the response is shorter than its offset,
        /// so without this a run could end with nothing dropped, and nothing tested.
        public var guaranteedDropAfter = 10

        /// A configuration with the defaults and `seed`.
        public init(seed: UInt64) {
            self.seed = seed
        }
    }

    /// What the proxy does to one request.
    enum Fault: Sendable, Hashable {
        /// Forwarded untouched.
        case none
        /// The request waits this long before it is forwarded.
        case delay(Duration)
        /// Closed once this many bytes of the request went to the server, or once all of it did when it is shorter.
        case dropDuringRequest(afterBytes: Int)
        /// Closed once this many bytes of the response's body (or, when heads may be cut, of the whole response) went
        /// to the client; not at all when it is shorter.
        case dropDuringResponse(afterBytes: Int)
    }

    /// What the proxy did so far.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Connections accepted.
        public var connections = 0
        /// Requests seen.
        public var requests = 0
        /// Requests delayed.
        public var delayed = 0
        /// Connections closed part-way through a request.
        public var droppedDuringRequest = 0
        /// Connections closed part-way through a response.
        public var droppedDuringResponse = 0

        /// Connections dropped either way.
        public var dropped: Int { droppedDuringRequest + droppedDuringResponse }

        public var description: String {
            "\(requests) requests on \(connections) connections, \(delayed) delayed, \(droppedDuringRequest) dropped mid-request, \(droppedDuringResponse) dropped mid-response"
        }
    }

    /// The port the proxy listens on.
    public let port: Int
    /// The port it forwards to.
    public let targetPort: Int
    let core: FaultProxyCore
    private let channel: any Channel

    private init(port: Int, targetPort: Int, core: FaultProxyCore, channel: any Channel) {
        self.port = port
        self.targetPort = targetPort
        self.core = core
        self.channel = channel
    }

    /// `http://127.0.0.1:PORT`, for clients that should go through the proxy.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a proxy on a free loopback port that forwards to `127.0.0.1:targetPort`.
    public static func start(forwardingTo targetPort: Int, configuration: Configuration) async throws -> FaultProxy {
        let core = FaultProxyCore(configuration)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: targetPort)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Nothing is read from a client before its connection to the server exists.
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { client in
                client.eventLoop.makeCompletedFuture {
                    try client.pipeline.syncOperations.addHandler(FaultProxyClientSide(core: core, target: target))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestSupportError("the fault proxy has no local port")
        }
        return FaultProxy(port: port, targetPort: targetPort, core: core, channel: channel)
    }

    /// Whether faults are on. While they are off, requests pass through (delays already begun run out), and none
    /// planned to drop does.
    public var isFaulty: Bool { core.isFaulty }

    /// Turns faults on or off (off for a clean final round).
    public func setFaulty(_ isFaulty: Bool) {
        core.setFaulty(isFaulty)
    }

    /// What the proxy did so far.
    public var statistics: Statistics { core.statistics }

    /// Closes every open connection at once, as a network change does (a WebSocket stream included).
    public func cutConnections() {
        for channel in core.openChannels() { channel.close(promise: nil) }
    }

    /// While refusing, the proxy closes every new connection as soon as it is accepted (the server looks down).
    public func setRefusing(_ isRefusing: Bool) {
        core.setRefusing(isRefusing)
    }

    /// Stops accepting connections (open ones end when either side closes them).
    public func stop() async {
        try? await channel.close()
    }
}

/// The state every connection of one proxy shares: the seeded generator, the fault switch and the counts.
final class FaultProxyCore: Sendable {
    private struct State {
        var generator: SplitMix64
        var isFaulty: Bool
        var isRefusing = false
        var statistics = FaultProxy.Statistics()
        /// Requests decided under faults, and whether one of them was to be dropped during its request.
        var faultyRequests = 0
        var hasDroppedARequest = false
        var open: [ObjectIdentifier: any Channel] = [:]
    }

    enum Direction { case request, response }

    let configuration: FaultProxy.Configuration
    private let state: Mutex<State>

    init(_ configuration: FaultProxy.Configuration) {
        self.configuration = configuration
        state = Mutex(State(generator: SplitMix64(seed: configuration.seed), isFaulty: configuration.isFaulty))
    }

    var isFaulty: Bool { state.withLock { $0.isFaulty } }
    var statistics: FaultProxy.Statistics { state.withLock { $0.statistics } }

    func setFaulty(_ isFaulty: Bool) {
        state.withLock { $0.isFaulty = isFaulty }
    }

    func setRefusing(_ isRefusing: Bool) {
        state.withLock { $0.isRefusing = isRefusing }
    }

    /// Registers a client connection just accepted; `false` when the proxy refuses connections.
    func admit(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.isRefusing else { return false }
            state.open[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func forget(_ channel: any Channel) {
        _ = state.withLock { $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func openChannels() -> [any Channel] {
        state.withLock { Array($0.open.values) }
    }

    /// Counts a connection just accepted.
    func noteConnection() {
        state.withLock { $0.statistics.connections += 1 }
    }

    /// Decides the fate of a request just begun.
    func decide() -> FaultProxy.Fault {
        let configuration = configuration
        return state.withLock { state in
            state.statistics.requests += 1
            guard state.isFaulty else { return .none }
            let roll = Double.random(in: 0..<1, using: &state.generator)
            let limit = max(1, configuration.maximumDropOffset)
            state.faultyRequests += 1
            let dropRequest = roll < configuration.faultRate && Bool.random(using: &state.generator)
            if dropRequest || (!state.hasDroppedARequest && state.faultyRequests > configuration.guaranteedDropAfter) {
                state.hasDroppedARequest = true
                return .dropDuringRequest(afterBytes: Int.random(in: 1...limit, using: &state.generator))
            }
            if roll < configuration.faultRate {
                return .dropDuringResponse(afterBytes: Int.random(in: (configuration.cutsResponseHeads ? 1 : 0)...limit, using: &state.generator))
            }
            if roll < configuration.faultRate + configuration.delayRate {
                state.statistics.delayed += 1
                let low = Self.nanoseconds(configuration.minimumDelay), high = max(low, Self.nanoseconds(configuration.maximumDelay))
                return .delay(.nanoseconds(Int64.random(in: low...high, using: &state.generator)))
            }
            return .none
        }
    }

    /// Counts a connection closed on purpose.
    func noteDrop(_ direction: Direction) {
        state.withLock { state in
            switch direction {
            case .request: state.statistics.droppedDuringRequest += 1
            case .response: state.statistics.droppedDuringResponse += 1
            }
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
