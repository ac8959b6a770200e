import Foundation
import HTTPTypes

/// The proxies whose `Forwarded` / `X-Forwarded-For` headers say who the client is.
///
/// Only a request whose socket peer lies in one of ``networks`` has its headers read, and then from the right: each
/// trusted proxy appends the address it saw, so the rightmost address that is not a trusted proxy is the client.
/// Anything left of it was written by the client and is ignored.
public struct TrustedProxies: Sendable, Hashable {
    /// The trusted proxies' addresses.
    public var networks: [IPNetwork]

    /// Trusts the proxies in `networks` (none by default: the socket peer is the client).
    public init(_ networks: [IPNetwork] = []) {
        self.networks = networks
    }

    func isTrusted(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client of a request from `peer` with `headers`.
    func client(peer: IPAddress?, headers: HTTPFields) -> IPAddress? {
        guard var client = peer, isTrusted(client) else { return peer }
        for hop in Self.forwardedHops(headers).reversed() {
            // A hop a trusted proxy cannot have written: the proxy itself is the best we know.
            guard let address = Self.address(ofHop: hop) else { return client }
            client = address
            if !isTrusted(address) { return address }
        }
        return client
    }

    /// The addresses the proxies recorded, nearest to the client first: `Forwarded`'s `for=` parameters when that
    /// header is present (RFC 7239), else `X-Forwarded-For`'s list.
    static func forwardedHops(_ headers: HTTPFields) -> [Substring] {
        let forwarded = headers[values: .forwarded]
        if !forwarded.isEmpty {
            return forwarded.flatMap { $0.split(separator: ",") }.compactMap { element in
                element.split(separator: ";").lazy
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.lowercased().hasPrefix("for=") }
                    .map { Substring($0.dropFirst(4)) }
            }
        }
        return headers[values: .xForwardedFor].flatMap { $0.split(separator: ",") }
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
