@testable import FerryServer
import FerryCore
import HTTPTypes
import Testing

/// Services throw `ServiceError`s, which know nothing of HTTP; the HTTP layer answers each kind with one status.
@Suite("Service errors as HTTP answers")
struct ServiceErrorMappingTests {
    @Test("each kind of refusal has its status; Retry-After and the service's header fields go with it", arguments: [
        (ServiceError.Kind.invalidRequest, 400), (.unauthenticated, 401), (.forbidden, 403), (.notFound, 404), (.timedOut, 408),
        (.conflict, 409), (.gone, 410), (.preconditionFailed, 412), (.tooLarge, 413), (.unsupportedMediaType, 415),
        (.rangeNotSatisfiable, 416), (.unprocessable, 422), (.rateLimited, 429), (.internalFailure, 500), (.upstreamFailed, 502),
        (.unavailable, 503),
    ])
    func status(_ kind: ServiceError.Kind, _ status: Int) {
        let refusal = ServiceError(
            kind, "some_code", "A sentence.", retryAfter: .milliseconds(1500), details: ["offset": 7], headers: ["Upload-Offset": "7"]
        )
        let answer = APIError(refusal)
        #expect(answer.status.code == status)
        #expect(answer.code == "some_code" && answer.message == "A sentence.")
        #expect(answer.headers[.retryAfter] == "1", "whole seconds, at least one")
        #expect(answer.headers[HTTPField.Name("Upload-Offset")!] == "7")
        #expect(answer.details == ["offset": 7])
        #expect(APIError(ServiceError(kind, "c", "m")).headers[.retryAfter] == nil)
    }
}
