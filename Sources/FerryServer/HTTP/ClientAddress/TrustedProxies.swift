import Foundation
import HTTPTypes

/// The proxies whose forwarding header says who the client is.
///
/// Only a request whose socket peer lies in one of ``networks`` has its header read, and then from the right: each
/// trusted proxy appends the address it saw, so the rightmost address that is not a trusted proxy is the client.
/// Anything left of it was written by the client and is ignored. Only the one ``header`` the proxies write is read:
/// proxies pass the other one through as the client sent it, so reading it would let a client pick its address.
public struct TrustedProxies: Sendable, Hashable {
    /// The header the trusted proxies append the client's address to.
    public enum Header: String, Sendable, Hashable, CaseIterable {
        /// `X-Forwarded-For` (nginx, HAProxy, AWS and most load balancers).
        case xForwardedFor = "x-forwarded-for"
        /// `Forwarded`'s `for=` parameters (RFC 7239).
        case forwarded
    }

    /// The trusted proxies' addresses.
    public var networks: [IPNetwork]
    /// The header they write.
    public var header: Header

    /// Trusts the proxies in `networks` (none by default: the socket peer is the client), which write `header`.
    public init(_ networks: [IPNetwork] = [], header: Header = .xForwardedFor) {
        self.networks = networks
        self.header = header
    }

    func isTrusted(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client of a request from `peer` with `headers`.
    func client(peer: IPAddress?, headers: HTTPFields) -> IPAddress? {
        guard var client = peer, isTrusted(client) else { return peer }
        for hop in Self.forwardedHops(headers, header: header).reversed() {
            // A hop a trusted proxy cannot have written: the proxy itself is the best we know.
            guard let address = Self.address(ofHop: hop) else { return client }
            client = address
            if !isTrusted(address) { return address }
        }
        return client
    }

    /// The addresses the proxies recorded in `header`, nearest to the client first.
    static func forwardedHops(_ headers: HTTPFields, header: Header) -> [Substring] {
        switch header {
        case .xForwardedFor:
            return headers[values: .xForwardedFor].flatMap { $0.split(separator: ",") }
        case .forwarded:
            return headers[values: .forwarded].flatMap { $0.split(separator: ",") }.compactMap { element in
                element.split(separator: ";").lazy
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.lowercased().hasPrefix("for=") }
                    .map { Substring($0.dropFirst(4)) }
            }
        }
    }

    /// `192.0.2.1`, `"[2001:db8::1]:4711"`, `192.0.2.1:8080` → the address; `unknown`, `_hidden` → `nil`.
    static func address(ofHop hop: Substring) -> IPAddress? {
        var text = hop.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<end])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])  // IPv4 with a port
        }
        return IPAddress(text)
    }
}

extension HTTPField.Name {
    /// `Forwarded` (RFC 7239).
    static let forwarded = Self("Forwarded")!
    /// `X-Forwarded-For`.
    static let xForwardedFor = Self("X-Forwarded-For")!
}
