import FerryCore
import Testing

/// Media types parse as RFC 9110 says, so an allow-list compares what a browser would act on.
@Suite("MIME types")
struct MIMETypeTests {
    @Test("well-formed types parse, with parameters; the essence is lowercase")
    func parses() throws {
        let type = try #require(MIMEType(parsing: "Audio/MPEG; charset=\"utf-8\" ; x=y"))
        #expect(type.essence == "audio/mpeg")
        #expect(MIMEType(parsing: "text/plain;charset=UTF-8")?.essence == "text/plain")
        #expect(MIMEType(parsing: "application/vnd.api+json")?.subtype == "vnd.api+json")
    }

    @Test("anything else is not a type", arguments: [
        "", "audio", "audio/", "/mpeg", "audio/../text/html", "audio/mpeg\ttext/html", "audio/mpeg text/html", "audio/mpeg; x",
        "audio/mpeg; x=\"open", "audio/mpeg;;", "audio/mp eg", "aud\u{0}io/mpeg", "audio/mpeg\u{7f}", "audio/mpeg; x=\u{1}",
    ])
    func refuses(_ text: String) {
        #expect(MIMEType(parsing: text) == nil, "\(text.debugDescription)")
    }

    @Test("patterns match the type exactly or its whole family, never a prefix of a name")
    func matches() throws {
        let audio = try #require(MIMEType(parsing: "audio/mpeg"))
        #expect(audio.matches("audio/*") && audio.matches("AUDIO/MPEG"))
        #expect(!audio.matches("audio/mp*") && !audio.matches("aud/*") && !audio.matches("audio/mpeg4"))
        #expect(try #require(MIMEType(parsing: "audiox/mpeg")).matches("audio/*") == false)
    }

    @Test("only media, plain text and data are shown inline")
    func inert() {
        for type in ["audio/mpeg", "video/mp4", "image/png", "text/plain", "application/pdf", "application/octet-stream"] {
            #expect(MIMEType(parsing: type)?.isInertInBrowsers == true, "\(type)")
        }
        for type in ["text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/javascript", "x-unknown/thing"] {
            #expect(MIMEType(parsing: type)?.isInertInBrowsers == false, "\(type)")
        }
    }
}
