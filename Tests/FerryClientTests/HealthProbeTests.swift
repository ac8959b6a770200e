import FerryClient
import FerryServer
import FerryTesting
import Foundation
import Testing

@Suite("Health probe")
struct HealthProbeTests {
    @Test("reachable while the server runs, unreachable once it stops")
    func followsTheServer() async throws {
        let database = try await TestDatabase.create(.sqlite)
        defer { Task { try? await database.destroy() } }
        let configuration = database.serverConfiguration
        let server = try await LiveServer.start(configuration)
        // A long timeout: the answer, not its speed, is under test (the machine may be loaded).
        let probe = HealthProbe(server: server.baseURL, timeout: .seconds(15))
        #expect(await probe.check() == .reachable)
        await server.stop()
        let after = await probe.check()
        #expect(!after.isReachable)
        #expect(after == .unreachable(reason: "connection refused"))
    }

    @Test("a server that never answers is unreachable within the timeout")
    func timesOut() async throws {
        // A listening socket that never accepts: the request waits until the probe gives up.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        listen(descriptor, 1)
        let port = UInt16(bigEndian: address.sin_port)
        let probe = HealthProbe(server: URL(string: "http://127.0.0.1:\(port)")!, timeout: .milliseconds(500))
        let start = ContinuousClock.now
        #expect(await probe.check() == .unreachable(reason: "no answer in time"))
        let elapsed = ContinuousClock.now - start
        // Loose upper bound: it only tells the probe's timeout from URLSession's 60 s default on a loaded machine.
        #expect(elapsed >= .milliseconds(450) && elapsed < .seconds(30), "waited \(elapsed)")
    }
}
