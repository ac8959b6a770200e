import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/console`: the operator console's single-page app (compiled into the binary) and its JSON API, `/console/api`,
/// which only an operator's session reaches (``ConsoleSessionMiddleware``): never an app user's token or an API key.
struct ConsoleRoutes {
    let console: ConsoleService
    let tables: TableService
    let exports: ExportService
    let backups: ConsoleBackups

    static let cookieName = "ferry_console"

    struct SignIn: Decodable, Sendable {
        var email: String
        var password: String
    }

    struct Ban: Decodable, Sendable {
        var duration: String
    }

    func register(on router: Router<FerryRequestContext>, operators: OperatorService, secureCookies: Bool) {
        ConsoleAssetRoutes().register(on: router)
        let api = router.group("console/api").add(middleware: ConsoleHeadersMiddleware())
        // Signing in is the one route without a session.
        DeadlineGroup(api).post("session") { request, context in
            // JSON only: a cross-site form (which cannot send this type without a preflight) cannot sign a browser in.
            guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
                throw APIError(.unsupportedMediaType, .badRequest, "Send the sign-in as JSON (Content-Type: application/json).")
            }
            var request = request
            let body = try await request.decodeJSON(SignIn.self, limit: 4096)
            let session = try await operators.signIn(email: body.email, password: body.password, client: context.rateLimitKey)
            var response = try JSONResponse(Self.sessionBody(session)).response(from: request, context: context)
            response.setCookie(Cookie(
                name: Self.cookieName, value: session.token, path: "/console", secure: secureCookies, httpOnly: true, sameSite: .strict
            ))
            return response
        }
        let session = api.add(middleware: ConsoleSessionMiddleware(operators: operators)).group(context: ConsoleContext.self)
        let signedIn = DeadlineGroup(session)
        signedIn.get("session") { _, context in JSONResponse(Self.sessionBody(context.session)) }
        signedIn.delete("session") { request, context in
            try await operators.signOut(context.session)
            var response = Response(status: .noContent)
            response.setCookie(Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/console", secure: secureCookies, httpOnly: true, sameSite: .strict))
            return response
        }
        registerReads(on: signedIn)
        registerActions(on: signedIn)
        // Outside the request deadline: the export streams as `/sync/v1/export` does, and a backup takes as long as
        // copying the database (an operator who saw it time out would start another).
        let exports = self.exports, backups = self.backups, console = self.console
        session.get("users/:id/export") { _, context -> Response in
            let id = try context.uuidParameter("id", what: "user")
            await operators.log(context.session.operatorRecord.email, "export_user", target: id.lowercasedText)
            return try ExportRoutes.response(try await exports.archive(userID: id), channel: context.channel)
        }
        session.post("backups") { _, context in
            let item = try await backups.create()
            await console.operators.log(context.session.operatorRecord.email, "backup", target: item.objectValue?["name"]?.stringValue ?? "")
            return JSONResponse(item, status: .created)
        }
    }

    private func registerReads(on group: DeadlineGroup<ConsoleContext>) {
        let console = self.console
        group.get("overview") { _, _ in JSONResponse(try await console.overview()) }
        group.get("users") { request, _ in JSONResponse(try await console.users(try Self.page(request))) }
        group.get("users/:id") { _, context in JSONResponse(try await console.user(try context.uuidParameter("id", what: "user"))) }
        group.get("spaces") { request, _ in JSONResponse(try await console.spaces(try Self.page(request))) }
        group.get("spaces/:id") { _, context in JSONResponse(try await console.space(try context.uuidParameter("id", what: "space"))) }
        group.get("devices") { request, _ in JSONResponse(try await console.devices(try Self.page(request))) }
        let records = ConsoleRecords(console: console, tables: tables)
        group.get("collections") { _, _ in JSONResponse(try await records.collections()) }
        group.get("collections/:name") { request, context in
            let name = context.parameters.get("name") ?? ""
            let query = request.uri.queryParameters
            return JSONResponse(try await records.records(
                name, page: try Self.page(request), order: query["order"].map(String.init), space: try query["space"].map { try Self.uuid(String($0), "space") }
            ))
        }
        group.get("collections/:name/:id") { _, context in
            JSONResponse(try await records.record(context.parameters.get("name") ?? "", id: try context.uuidParameter("id", what: "record")))
        }
        group.get("activity") { _, _ in JSONResponse(console.activityReport()) }
        group.get("storage") { _, _ in JSONResponse(try await console.storageReport()) }
        group.get("storage/buckets/:id") { request, context in
            JSONResponse(try await console.objects(bucket: context.parameters.get("id") ?? "", try Self.page(request)))
        }
        group.get("settings") { _, _ in JSONResponse(ConsoleSettings(console.configuration).json) }
        let backups = self.backups
        group.get("backups") { _, _ in JSONResponse(try await backups.list()) }
        group.get("log") { request, _ in JSONResponse(try await console.log(try Self.page(request))) }
    }

    private func registerActions(on group: DeadlineGroup<ConsoleContext>) {
        let console = self.console
        group.post("users/:id/ban") { request, context in
            var request = request
            let body = try await request.decodeJSON(Ban.self, limit: 1024)
            return JSONResponse(try await console.ban(try context.uuidParameter("id", what: "user"), duration: body.duration, by: context.session))
        }
        group.post("users/:id/sign-out") { _, context in
            JSONResponse(try await console.signOut(try context.uuidParameter("id", what: "user"), by: context.session))
        }
        group.delete("users/:id") { _, context in
            try await console.deleteUser(try context.uuidParameter("id", what: "user"), by: context.session)
            return HTTPResponse.Status.noContent
        }
        group.post("devices/:id/revoke") { _, context in
            JSONResponse(try await console.revoke(device: try context.uuidParameter("id", what: "device"), by: context.session))
        }
    }

    static func sessionBody(_ session: OperatorService.Session) -> JSONValue {
        [
            "operator": ["id": .string(session.operatorRecord.id.lowercasedText), "email": .string(session.operatorRecord.email)],
            "csrf_token": .string(session.csrfToken), "expires_at": ConsoleService.date(session.expiresAt),
        ]
    }

    /// `limit`, `offset` and `search` from the query.
    static func page(_ request: Request) throws -> ConsolePageRequest {
        let query = request.uri.queryParameters
        func number(_ name: String) throws -> Int? {
            guard let text = query[name[...]] else { return nil }
            guard let value = Int(text) else { throw ServiceError(.invalidRequest, .validationFailed, "\(name) is a whole number.") }
            return value
        }
        return try ConsolePageRequest(limit: number("limit"), offset: number("offset"), search: query["search"].map(String.init))
    }

    static func uuid(_ text: String, _ what: String) throws -> UUID {
        guard let id = UUID(wireText: text) else { throw ServiceError(.invalidRequest, .validationFailed, "The \(what) is not a UUID.") }
        return id
    }
}

/// The context of a console API route: the parent's, plus the operator's session.
struct ConsoleContext: ChildRequestContext, FerryChanneledContext {
    typealias ParentContext = FerryRequestContext
    var coreContext: CoreRequestContextStorage
    let session: OperatorService.Session
    let channel: any Channel

    init(context: FerryRequestContext) throws {
        guard let session = context.operatorSession else {
            throw APIError(.unauthorized, .noSession, "Sign in to the console first.")
        }
        self.coreContext = context.coreContext
        self.session = session
        self.channel = context.channel
    }
}

/// Finds the operator's session from the `ferry_console` cookie (401 `no_session` without a live one) and, for every
/// request that changes something, checks its `X-CSRF-Token` (403 `csrf_failed`). Bearer tokens and API keys mean
/// nothing here.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let operators: OperatorService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = request.cookies[ConsoleRoutes.cookieName]?.value, !token.isEmpty,
              let session = try await operators.session(token: token)
        else {
            throw APIError(.unauthorized, .noSession, "Sign in to the console first (no live console session).")
        }
        if ![.get, .head].contains(request.method), !operators.checksCSRF(request.headers[.csrfToken], for: session) {
            throw APIError(.forbidden, .csrfFailed, "This change needs the X-CSRF-Token header from the console session.")
        }
        var context = context
        context.operatorSession = session
        return try await next(request, context)
    }
}

/// Headers every console API answer carries: never cached, never framed, never sniffed.
struct ConsoleHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            var response = try await next(request, context)
            ConsoleAssetRoutes.secure(&response.headers)
            return response
        } catch {
            // Refusals too: the one mapping of errors to answers, with the console's headers added.
            var refusal = ErrorMiddleware<Context>.apiError(for: error, request, context)
            refusal.headers[.cacheControl] = "no-store"
            refusal.headers[.xContentTypeOptions] = "nosniff"
            throw refusal
        }
    }
}

extension HTTPField.Name {
    static let csrfToken = HTTPField.Name("X-CSRF-Token")!
}

extension ErrorCode {
    /// No live console session.
    static let noSession: ErrorCode = "no_session"
    /// A console change without the session's CSRF token.
    static let csrfFailed: ErrorCode = "csrf_failed"
    /// What this server's set-up cannot do (a backup of a PostgreSQL database from the console).
    static let notSupported: ErrorCode = "not_supported"
}
