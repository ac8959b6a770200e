import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLError {
    /// A few words saying why no answer came, for reasons shown to people ("connection refused").
    var summary: String {
        switch code {
        case .timedOut: "no answer in time"
        case .cannotConnectToHost: "connection refused"
        case .notConnectedToInternet, .networkConnectionLost: "no network"
        case .cannotFindHost, .dnsLookupFailed: "unknown host"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            "TLS failed"
        default: "network error \(code.rawValue)"
        }
    }
}
