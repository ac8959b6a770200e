import FerryCore
import FerryTesting
import Foundation
import HTTPTypes
import Testing
@testable import FerryServer

/// Who the client is: the socket peer, or what a trusted proxy says; IPv6 clients counted per /64.
@Suite("Client addresses behind proxies")
struct ClientAddressTests {
    static func client(
        _ peer: String, trusting proxies: [String], header: TrustedProxies.Header = .xForwardedFor, _ headers: HTTPFields
    ) -> String? {
        TrustedProxies(proxies.map { IPNetwork($0)! }, header: header).client(peer: IPAddress(peer), headers: headers)?.description
    }

    @Test("forwarding headers count only from a trusted peer, read from the right")
    func resolution() {
        let forwardedFor = HTTPField.Name("X-Forwarded-For")!, forwarded = HTTPField.Name("Forwarded")!
        #expect(Self.client("127.0.0.1", trusting: [], [forwardedFor: "198.51.100.1"]) == "127.0.0.1")
        #expect(Self.client("127.0.0.1", trusting: ["127.0.0.1"], [forwardedFor: "198.51.100.1, 203.0.113.7"]) == "203.0.113.7")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwardedFor: "198.51.100.1, 10.9.9.9"]) == "198.51.100.1")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwardedFor: "10.1.1.1"]) == "10.1.1.1")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwardedFor: "198.51.100.1, garbage"]) == "10.0.0.2")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwardedFor: "198.51.100.1:4711"]) == "198.51.100.1")
        #expect(Self.client("::1", trusting: ["::1"], header: .forwarded, [
            forwarded: #"for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711""#, forwardedFor: "198.51.100.1",
        ]) == "2001:db8:cafe::17")
        // Only the configured header counts: a proxy that appends X-Forwarded-For passes a client's own Forwarded
        // through, which must not choose the client's address (and the other way round).
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwarded: "for=192.0.2.99", forwardedFor: "198.51.100.7"]) == "198.51.100.7")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [forwarded: "for=192.0.2.99"]) == "10.0.0.2")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], header: .forwarded, [forwardedFor: "198.51.100.7"]) == "10.0.0.2")
        #expect(Self.client("10.0.0.2", trusting: ["10.0.0.0/8"], [:]) == "10.0.0.2")
    }

    @Test("addresses and networks parse strictly; IPv6 rate-limit keys are /64 prefixes")
    func addresses() {
        #expect(IPAddress("2001:db8:1:2:3:4:5:6")?.rateLimitKey == "2001:db8:1:2::/64")
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("192.0.2.1")?.rateLimitKey == "192.0.2.1")
        #expect(IPAddress("127.0.0.2")?.isLoopback == true && IPAddress("::1")?.isLoopback == true)
        #expect(IPAddress("10.0.0.1")?.isLoopback == false)
        #expect(IPAddress("1.2.3") == nil && IPAddress("[::1]") == nil && IPAddress("") == nil)
        #expect(IPNetwork("10.0.0.0/8")!.contains(IPAddress("10.255.0.1")!))
        #expect(!IPNetwork("10.0.0.0/8")!.contains(IPAddress("11.0.0.1")!))
        #expect(IPNetwork("2001:db8::/32")!.contains(IPAddress("2001:db8:ffff::1")!))
        #expect(!IPNetwork("2001:db8::/32")!.contains(IPAddress("10.0.0.1")!))
        #expect(IPNetwork("192.0.2.0/25")!.contains(IPAddress("192.0.2.127")!) && !IPNetwork("192.0.2.0/25")!.contains(IPAddress("192.0.2.128")!))
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("nope") == nil && IPNetwork("10.0.0.0/") == nil)
    }

    @Test("behind a trusted proxy, each forwarded client has its own budget; one IPv6 /64 shares one")
    func liveLimits() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.trustedProxies = TrustedProxies([IPNetwork("127.0.0.0/8")!])
            configuration.auth.signInAttemptsPerAddress = 2
        }) { (server: LiveServer) async throws in
            let auth = AuthHarness(server: server)
            func attempt(from client: String) async throws -> Int {
                try await server.send("POST", "/auth/v1/token?grant_type=password",
                    headers: ["apikey": auth.anonKey, "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.99, \(client)"],
                    body: try JSONSerialization.data(withJSONObject: ["email": uniqueEmail(), "password": "wrong horse 1"])
                ).status
            }
            #expect(try await attempt(from: "203.0.113.5") == 400)
            #expect(try await attempt(from: "203.0.113.5") == 400)
            #expect(try await attempt(from: "203.0.113.5") == 429)
            #expect(try await attempt(from: "203.0.113.6") == 400, "another client has its own budget")
            #expect(try await attempt(from: "2001:db8:1:2::1") == 400)
            #expect(try await attempt(from: "2001:db8:1:2::ffff") == 400)
            #expect(try await attempt(from: "2001:db8:1:2:aaaa::1") == 429, "the same /64")
            #expect(try await attempt(from: "2001:db8:1:3::1") == 400, "another /64")
        }
    }

    @Test("without trusted proxies, forwarding headers are ignored: every request counts against the socket peer")
    func untrustedHeaders() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.auth.signInAttemptsPerAddress = 2
        }) { server in
            let auth = AuthHarness(server: server)
            var statuses: [Int] = []
            for hop in 1...3 {
                statuses.append(try await server.send("POST", "/auth/v1/token?grant_type=password",
                    headers: ["apikey": auth.anonKey, "Content-Type": "application/json", "X-Forwarded-For": "203.0.113.\(hop)"],
                    body: try JSONSerialization.data(withJSONObject: ["email": uniqueEmail(), "password": "wrong horse 1"])
                ).status)
            }
            #expect(statuses == [400, 400, 429])
        }
    }
}
