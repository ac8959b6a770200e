import Foundation

/// An address no other test uses, `prefix-1a2b3c4d@example.com`: tests that share a server or database never meet
/// another test's account, and the prefix says in a log which test made it.
public func uniqueEmail(_ prefix: String = "user") -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
}
