import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority made on the spot, and the loopback server certificates it signs, for TLS stand-ins.
///
/// A client under test is given the authority's certificate as its only extra trust root, so it verifies the stand-in
/// exactly as it would a real service (chain and host name), without a trust setting that weakens production code.
/// Nothing here is written to disk; the caller decides where the PEM goes.
struct TestCertificateAuthority: Sendable {
    /// The authority's certificate (PEM), what a client trusts.
    let certificatePEM: String

    private let key: P256.Signing.PrivateKey
    private let name: DistinguishedName

    /// A new self-signed authority with a P-256 key, valid from an hour ago (clock skew) to a day from now.
    init(commonName: String) throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let publicKey = Certificate.PrivateKey(key).publicKey
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: publicKey)
        }
        let certificate = try Self.sign(publicKey: publicKey, subject: name, issuer: name, extensions: extensions, key: key)
        certificatePEM = try certificate.serializeAsPEM().pemString
        (self.key, self.name) = (key, name)
    }

    /// A certificate for a TLS server on loopback (SANs: IP 127.0.0.1 and DNS localhost; server authentication only),
    /// signed by this authority, with its new P-256 key (PKCS#8), both PEM.
    func issueLoopbackServerCertificate(commonName: String = "localhost") throws -> (certificatePEM: String, keyPEM: String) {
        let serverKey = P256.Signing.PrivateKey()
        let publicKey = Certificate.PrivateKey(serverKey).publicKey
        let authorityKeyID = SubjectKeyIdentifier(hash: Certificate.PrivateKey(key).publicKey).keyIdentifier
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
            SubjectKeyIdentifier(hash: publicKey)
            AuthorityKeyIdentifier(keyIdentifier: authorityKeyID)
        }
        let subject = try DistinguishedName { CommonName(commonName) }
        let certificate = try Self.sign(publicKey: publicKey, subject: subject, issuer: name, extensions: extensions, key: key)
        let certificatePEM = try certificate.serializeAsPEM().pemString
        return (certificatePEM, serverKey.pemRepresentation)
    }

    private static func sign(
        publicKey: Certificate.PublicKey, subject: DistinguishedName, issuer: DistinguishedName, extensions: Certificate.Extensions,
        key: P256.Signing.PrivateKey
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(24 * 3600),
            issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }
}

/// A test CA and a certificate it signed for 127.0.0.1 and localhost, written as PEM files: for a TLS server on loopback
/// (nginx in front of Ferry in the load-balancer test) and for the clients that must trust it.
public struct LoopbackCertificates: Sendable {
    /// The CA's certificate, for clients to trust.
    public let caFile: String
    /// The server's certificate.
    public let certificateFile: String
    /// The server's private key (0600).
    public let keyFile: String

    /// Makes a CA and a server certificate and writes them into `folder` (created when missing).
    public static func write(into folder: String, commonName: String = "Ferry test CA") throws -> LoopbackCertificates {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let authority = try TestCertificateAuthority(commonName: commonName)
        let server = try authority.issueLoopbackServerCertificate()
        let files = LoopbackCertificates(caFile: folder + "/ca.pem", certificateFile: folder + "/server.pem", keyFile: folder + "/server-key.pem")
        try authority.certificatePEM.write(toFile: files.caFile, atomically: true, encoding: .utf8)
        try server.certificatePEM.write(toFile: files.certificateFile, atomically: true, encoding: .utf8)
        guard FileManager.default.createFile(atPath: files.keyFile, contents: Data(server.keyPEM.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw TestSupportError("could not write the test key to \(files.keyFile)")
        }
        return files
    }
}
