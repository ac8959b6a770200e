import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/rest/v1/{table}`: PostgREST's wire format over the synced collections (docs/rest.md). Parses the request,
/// hands it to ``TableService``, and writes the reply as PostgREST does (`Content-Range`, `Prefer`, single objects).
struct TableRoutes {
    let tables: TableService
    /// The largest JSON body a write takes.
    var maximumBodyBytes = 16 * 1024 * 1024

    func register(on group: DeadlineGroup<TableContext>) {
        let routes = self
        group.get(":table") { request, context in try await routes.read(request, context, withBody: true) }
        group.head(":table") { request, context in try await routes.read(request, context, withBody: false) }
        group.post(":table") { request, context in try await routes.insert(request, context) }
        group.patch(":table") { request, context in try await routes.update(request, context) }
        group.delete(":table") { request, context in try await routes.delete(request, context) }
    }

    private func read(_ request: Request, _ context: TableContext, withBody: Bool) async throws -> Response {
        let form = try ReplyForm(accepting: request)
        var query = try TableQuery(parameters: Self.parameters(request))
        let preferences = TablePreferences(request.headers[values: .prefer])
        if let range = try Self.range(request.headers[.range]) {
            query.offset = range.offset
            if let limit = range.limit { query.limit = min(query.limit ?? limit, limit) }
        }
        let page = try await tables.read(context.caller, table: try Self.table(context), query: query, countsAll: preferences.count != nil)
        var headers = HTTPFields()
        headers[.contentRange] = Self.contentRange(offset: page.offset, count: page.rows.count, total: page.total)
        var status = HTTPResponse.Status.ok
        if let total = page.total, page.rows.count < total, query.limit != nil || query.offset != nil || request.headers[.range] != nil {
            status = .partialContent
        }
        if let total = page.total, total > 0, page.offset >= total {
            throw TableError(
                .rangeNotSatisfiable, "PGRST103", "Requested range not satisfiable",
                details: "An offset of \(page.offset) was requested, but there are only \(total) rows."
            )
        }
        return try Self.reply(page.rows, form: form, status: status, headers: headers, withBody: withBody)
    }

    private func insert(_ request: Request, _ context: TableContext) async throws -> Response {
        let form = try ReplyForm(accepting: request)
        let query = try TableQuery(parameters: Self.parameters(request))
        let preferences = TablePreferences(request.headers[values: .prefer])
        var request = request
        let bodies: [[String: JSONValue]]
        switch try await body(&request) {
        case .object(let members): bodies = [members]
        case .array(let items):
            bodies = try items.map { item throws(TableError) in
                guard case .object(let members) = item else { throw Self.invalidBody("each element of the array must be a JSON object") }
                return members
            }
        default: throw Self.invalidBody("the body must be a JSON object or an array of objects")
        }
        let resolution: TableService.Resolution = switch preferences.resolution {
        case "merge-duplicates": .mergeDuplicates
        case "ignore-duplicates": .ignoreDuplicates
        default: .none
        }
        let written = try await tables.insert(context.caller, table: try Self.table(context), bodies: bodies, query: query, resolution: resolution)
        return try Self.written(written, form: form, preferences: preferences, status: .created)
    }

    private func update(_ request: Request, _ context: TableContext) async throws -> Response {
        let form = try ReplyForm(accepting: request)
        let query = try TableQuery(parameters: Self.parameters(request))
        let preferences = TablePreferences(request.headers[values: .prefer])
        var request = request
        guard case .object(let members) = try await body(&request) else { throw Self.invalidBody("a PATCH body is one JSON object") }
        let written = try await tables.update(context.caller, table: try Self.table(context), body: members, query: query)
        return try Self.written(written, form: form, preferences: preferences, status: .ok)
    }

    private func delete(_ request: Request, _ context: TableContext) async throws -> Response {
        let form = try ReplyForm(accepting: request)
        let query = try TableQuery(parameters: Self.parameters(request))
        let preferences = TablePreferences(request.headers[values: .prefer])
        let written = try await tables.delete(context.caller, table: try Self.table(context), query: query)
        return try Self.written(written, form: form, preferences: preferences, status: .ok)
    }

    // MARK: - Reading the request

    private static func table(_ context: TableContext) throws -> String {
        try context.parameters.require("table")
    }

    /// The query's parameters in order, decoded, repeats kept (`id=gt.1&id=lt.9` is two filters). `+` is a space,
    /// as in HTML forms and PostgREST: httpx (supabase-py) sends spaces so.
    static func parameters(_ request: Request) -> [(key: String, value: String)] {
        guard let query = request.uri.query else { return [] }
        func decoded(_ part: Substring) -> String {
            let spaced = part.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
        }
    }

    private func body(_ request: inout Request) async throws -> JSONValue {
        do {
            return try await request.decodeJSON(JSONValue.self, limit: maximumBodyBytes)
        } catch let error as APIError where error.status == .badRequest {
            throw Self.invalidBody(error.message)
        }
    }

    private static func invalidBody(_ message: String) -> TableError {
        TableError(.invalidRequest, "PGRST102", "Empty or invalid json", details: message)
    }

    /// `Range: 0-24` (items), as `offset` and `limit`. A header that is no such range is ignored, as PostgREST does
    /// (HTTP lets a server ignore a Range it does not understand); one whose end comes before its start is `PGRST103`.
    static func range(_ header: String?) throws(TableError) -> (offset: Int, limit: Int?)? {
        guard let header else { return nil }
        let parts = header.trimmingCharacters(in: .whitespaces).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]).map({ min($0, TableQuery.maximumCount) }), first >= 0 else { return nil }
        guard !parts[1].isEmpty else { return (first, nil) }
        guard let last = Int(parts[1]).map({ min($0, TableQuery.maximumCount) }) else { return nil }
        guard last >= first else {
            throw TableError(.rangeNotSatisfiable, "PGRST103", "Requested range not satisfiable", details: "The range's last item comes before its first.")
        }
        return (first, last - first + 1)
    }

    // MARK: - Writing the reply

    /// `first-last/total`: `*` for an unknown total, `*/total` for no rows.
    static func contentRange(offset: Int, count: Int, total: Int?) -> String {
        let span = count == 0 ? "*" : "\(offset)-\(offset + count - 1)"
        return "\(span)/\(total.map(String.init) ?? "*")"
    }

    private static func written(_ written: TableService.Written, form: ReplyForm, preferences: TablePreferences, status: HTTPResponse.Status) throws -> Response {
        var headers = HTTPFields()
        headers[.contentRange] = contentRange(offset: 0, count: written.count, total: preferences.count != nil ? written.count : nil)
        var applied: [String] = []
        if let returning = preferences.returning { applied.append("return=\(returning)") }
        if let resolution = preferences.resolution { applied.append("resolution=\(resolution)") }
        if !applied.isEmpty { headers[.preferenceApplied] = applied.joined(separator: ", ") }
        guard preferences.returning == "representation" else {
            return Response(status: status == .created ? .created : .noContent, headers: headers)
        }
        return try reply(written.rows, form: form, status: status, headers: headers, withBody: true)
    }

    /// The rows as a JSON array, or as one object when the request accepts `application/vnd.pgrst.object+json`
    /// (supabase's `single()`), which then must be exactly one row.
    private static func reply(_ rows: TableRows, form: ReplyForm, status: HTTPResponse.Status, headers: HTTPFields, withBody: Bool) throws -> Response {
        var headers = headers
        var body = ByteBuffer()
        body.reserveCapacity(rows.approximateJSONByteCount)
        if form == .object {
            guard rows.count == 1 else {
                throw TableError(
                    .notAcceptable, "PGRST116", "Cannot coerce the result to a single JSON object",
                    details: "The result contains \(rows.count) rows"
                )
            }
            headers[.contentType] = "application/vnd.pgrst.object+json; charset=utf-8"
            body.writeBytes(rows.row(0))
        } else {
            headers[.contentType] = "application/json; charset=utf-8"
            body.writeStaticString("[")
            body.writeBytes(rows.text)
            body.writeStaticString("]")
        }
        let status: HTTPResponse.Status = status == .partialContent || status == .created ? status : .ok
        guard withBody else {
            headers[.contentLength] = "\(body.readableBytes)"
            return Response(status: status, headers: headers)
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}

/// What a table reply is written as, from the request's `Accept`: a JSON array, or one object (`single()`). A request
/// that accepts neither (CSV, a query plan) is refused before any work, `406 PGRST107`.
enum ReplyForm: Sendable, Equatable {
    case array
    case object

    static let arrayTypes: Set<String> = ["*/*", "application/*", "application/json", "application/vnd.pgrst.array+json"]
    static let objectType = "application/vnd.pgrst.object+json"

    init(accepting request: Request) throws(TableError) {
        let types = request.headers[values: .accept].flatMap { $0.split(separator: ",") }.map {
            ($0.split(separator: ";").first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        }
        if types.contains(Self.objectType) {
            self = .object
        } else if types.isEmpty || types.contains(where: Self.arrayTypes.contains) {
            self = .array
        } else {
            throw TableError(
                .notAcceptable, "PGRST107", "None of these media types are available: \(types.joined(separator: ", ").prefix(200))",
                hint: "Tables answer application/json, or application/vnd.pgrst.object+json for one row."
            )
        }
    }
}

/// The `Prefer` header's tokens a table request honours: `return=`, `count=`, `resolution=`.
struct TablePreferences: Sendable {
    var returning: String?
    var count: String?
    var resolution: String?

    init(_ values: [String]) {
        for token in values.flatMap({ $0.split(separator: ",") }) {
            let parts = token.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch (parts[0], parts[1]) {
            case ("return", "representation"), ("return", "minimal"), ("return", "headers-only"): returning = parts[1]
            case ("count", "exact"), ("count", "planned"), ("count", "estimated"): count = parts[1]
            case ("resolution", "merge-duplicates"), ("resolution", "ignore-duplicates"): resolution = parts[1]
            default: continue
            }
        }
    }
}

/// Renders every error of `/rest/v1` in PostgREST's shape, `{"code", "message", "details", "hint"}`, which
/// supabase-js, -swift and -py parse into their `PostgrestError`.
struct TableErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as TableError {
            return Self.response(status: APIError.status(of: error.kind), code: error.code, message: error.message, details: error.details, hint: error.hint)
        } catch {
            let api = ErrorMiddleware<Context>.apiError(for: error, request, context)
            return Self.response(status: api.status, code: api.code.rawValue, message: api.message, details: nil, hint: nil, headers: api.headers)
        }
    }

    /// A request under `/rest/v1` that matched no route, with PostgREST's code for it: `PGRST202` for a function
    /// (`/rpc/…`; Ferry serves none), `PGRST125` for any other path, `PGRST117` for a method no route takes.
    static func response(unmatched error: APIError, path: String) -> Response {
        let rest = path.dropFirst("/rest/v1/".count)
        switch error.status {
        case .notFound where rest.hasPrefix("rpc/"):
            let function = rest.dropFirst("rpc/".count).prefix(100)
            return response(
                status: .notFound, code: "PGRST202", message: "Could not find the function \(function) in the schema cache",
                details: nil, hint: "Ferry serves tables, not functions: run the function's work in a backend with the service-role key."
            )
        case .notFound:
            return response(status: .notFound, code: "PGRST125", message: "Invalid path specified in request URL", details: nil, hint: nil)
        case .methodNotAllowed:
            return response(status: .methodNotAllowed, code: "PGRST117", message: error.message, details: nil, hint: nil, headers: error.headers)
        default:
            return response(status: error.status, code: error.code.rawValue, message: error.message, details: nil, hint: nil, headers: error.headers)
        }
    }

    static func response(
        status: HTTPResponse.Status, code: String, message: String, details: String?, hint: String?, headers: HTTPFields = [:]
    ) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body: JSONValue = .object([
            "code": .string(code), "message": .string(message),
            "details": details.map(JSONValue.string) ?? .null, "hint": hint.map(JSONValue.string) ?? .null,
        ])
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body.jsonText)))
    }
}

extension HTTPField.Name {
    static let prefer = Self("Prefer")!
    static let preferenceApplied = Self("Preference-Applied")!
}
