import FerryClient
import FerryCore
import FerryTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The fault-injecting proxy itself: clean when faults are off, and a dropped request fails fast instead of hanging.
@Suite("Fault proxy")
struct FaultProxyTests {
    @Test("with faults off every request passes through; with every request faulty each fails at once, some mid-request and some mid-response")
    func dropsAndPasses() async throws {
        try await LiveServer.with(.sqlite) { server in
            var configuration = FaultProxy.Configuration(seed: 42)
            configuration.isFaulty = false
            configuration.faultRate = 1
            configuration.maximumDropOffset = 10
            let proxy = try await FaultProxy.start(forwardingTo: server.port, configuration: configuration)
            let transport = DefaultHTTPTransport(timeout: .seconds(20))
            func post() async -> (ok: Bool, seconds: Double, error: String) {
                var request = URLRequest(url: proxy.baseURL.appending(path: "sync/v1/pull"))
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(#"{"cursors":{},"limit":10,"padding":"\#(String(repeating: "x", count: 400))"}"#.utf8)
                let started = ContinuousClock.now
                do {
                    let (_, response) = try await transport.send(request)
                    return (response.statusCode == 401, (ContinuousClock.now - started).timeInterval, "")
                } catch {
                    return (false, (ContinuousClock.now - started).timeInterval, "\(error)")
                }
            }
            for _ in 0..<5 {
                let result = await post()
                #expect(result.ok, "a clean request failed: \(result.error)")
            }
            proxy.setFaulty(true)
            for index in 0..<20 {
                let result = await post()
                #expect(!result.ok, "request \(index) passed a proxy that drops every request")
                #expect(result.seconds < 5, "request \(index) took \(result.seconds) s to fail: \(result.error); \(proxy.statistics)")
            }
            let statistics = proxy.statistics
            #expect(statistics.droppedDuringRequest > 0 && statistics.droppedDuringResponse > 0, "\(statistics)")
            proxy.setFaulty(false)
            let result = await post()
            #expect(result.ok, "a clean request after the faults failed: \(result.error)")
            await proxy.stop()
        }
    }
}
