import GPSFixDevices
import NIOCore
import NTRIPCasting
import ReceiverFraming

/// The two ways NTRIP gives a source to hand its stream to a caster.
public enum NTRIPServerVersion: Int, Sendable, CaseIterable {
    /// NTRIP 1.0's `SOURCE password /MOUNT`, which every caster takes.
    case one = 1
    /// NTRIP 2.0's `POST /MOUNT` with Basic authentication and chunked transfer.
    case two = 2
}

/// What a source says to a caster and how it reads the answer, without the network: the
/// request that opens a push, the verdict on the caster's status line, and each frame as
/// it goes on the wire.
struct NTRIPServerHandshake: Sendable {
    let caster: NTRIPCaster
    let version: NTRIPServerVersion
    /// After `NTRIP ` in `Source-Agent` or `User-Agent`: `GPSFix/0.2`.
    let userAgent: String

    /// The opening request. `bareMountpoint` writes NTRIP 1.0's mountpoint without its
    /// slash, as some casters want it.
    func request(bareMountpoint: Bool = false) -> [UInt8] {
        let password = caster.password ?? ""
        let lines: [String]
        switch version {
        case .one:
            lines = [
                "SOURCE \(password) \(bareMountpoint ? "" : "/")\(caster.mountpoint)",
                "Source-Agent: NTRIP \(userAgent)",
            ]
        case .two:
            lines = [
                "POST /\(caster.mountpoint) HTTP/1.1",
                "Host: \(caster.hostHeader)",
                "Ntrip-Version: Ntrip/2.0",
                "Authorization: \(caster.basicAuthorization)",
                "User-Agent: NTRIP \(userAgent)",
                "Content-Type: gnss/data",
                "Transfer-Encoding: chunked",
            ]
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// What the caster's first line says.
    enum Verdict: Equatable {
        case accepted
        /// The caster's line, printable, without the password should it echo it.
        case refused(String)
    }

    /// Whether `statusLine` accepts the stream: `ICY 200 OK` (or an old caster's bare `OK`)
    /// for NTRIP 1.0, `HTTP/1.x 200` for either (a 2.0 caster answering a 1.0 source).
    func verdict(on statusLine: String) -> Verdict {
        let parts = statusLine.split(separator: " ")
        let accepted = switch version {
        case .one: statusLine == "ICY 200 OK" || statusLine == "OK" || Self.isHTTPOK(parts)
        case .two: Self.isHTTPOK(parts)
        }
        if accepted { return .accepted }
        // The password out first, as sent and as Basic carries it, then what cannot be printed.
        let shown = caster.masked(statusLine).printable(limit: 120)
        return .refused(shown.isEmpty ? "an empty line" : shown)
    }

    private static func isHTTPOK(_ parts: [Substring]) -> Bool {
        parts.count >= 2 && parts[0].hasPrefix("HTTP/1.") && parts[1] == "200"
    }

    /// `frame` as it goes on the wire: as it is for NTRIP 1.0, one chunk for 2.0.
    func framed(_ frame: ByteBuffer) -> ByteBuffer {
        version == .two ? ChunkedTransfer.chunk(frame) : frame
    }
}

/// The caster's answer to a push: its first line, once whole (without its line end), and
/// nothing after it, which a caster taking a stream has no reason to send and the source
/// no use for. A first line over 1 KiB is not NTRIP.
struct StatusLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    static let maximumLine = 1024
    private var lineRead = false

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !lineRead else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            guard buffer.readableBytes <= Self.maximumLine else { throw NTRIPError.protocolViolation("the caster's answer has no line end in 1 KiB") }
            return .needMoreData
        }
        var line = buffer.readString(length: end - buffer.readerIndex) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        lineRead = true
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
