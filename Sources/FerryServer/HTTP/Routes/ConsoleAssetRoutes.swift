import FerryCore
import HTTPTypes
import Hummingbird
import NIOCore

/// The console's files, compiled into the binary (``ConsoleAssets``): `/console/assets/{file}`, and the app's page for
/// `/console` and every other path under it, so a bookmarked deep link loads the app, which shows that page.
struct ConsoleAssetRoutes {
    /// Only the page's own files run: no inline script or style, nothing from elsewhere, never in a frame.
    static let contentSecurityPolicy = """
        default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
        frame-ancestors 'none'; base-uri 'none'; form-action 'self'
        """

    func register(on router: Router<FerryRequestContext>) {
        router.get("console") { _, _ in Self.page() }
        router.get("console/assets/:file") { _, context in
            let name = context.parameters.get("file") ?? ""
            guard let text = ConsoleAssets.files[name], name != "index.html" else {
                throw APIError(.notFound, .notFound, "The console has no file \(name.prefix(100)).")
            }
            var headers = HTTPFields()
            headers[.contentType] = Self.contentType(of: name)
            // Files change with the binary: revalidate rather than cache for long.
            headers[.cacheControl] = "no-cache"
            Self.secure(&headers)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.get("console/**") { request, _ in
            // An unknown API path is the API's 404, not the app's page.
            guard !request.uri.path.hasPrefix("/console/api/") else {
                throw APIError(.notFound, .notFound, "No route for GET \(request.uri.path.prefix(200)).")
            }
            return Self.page()
        }
    }

    static func page() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        secure(&headers)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.files["index.html"] ?? "")))
    }

    /// The headers every console answer carries.
    static func secure(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
        headers[.referrerPolicy] = "no-referrer"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "html": "text/html; charset=utf-8"
        default: "text/plain; charset=utf-8"
        }
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
