import NIOCore
import ServiceAddress

#if TLS
import NIOSSL
#endif

/// TLS for the daemon's own connections out (`ntrips://` casters, `https://` Traccar
/// endpoints): the server's certificate checked against the system's authorities, or a
/// PEM file's, and its name against the host's.
///
/// TLS comes from swift-nio-ssl (BoringSSL), compiled only with the package's `TLS` trait,
/// which is on by default: the demo's first build leaves it out, and so does any build
/// made with `--disable-default-traits`. Such a build refuses a TLS address when the
/// daemon starts, saying why, rather than connecting in the clear.
public struct ClientTLS: Sendable {
    #if TLS
    private let context: NIOSSLContext
    #else
    /// A build without TLS has no value of this type: ``init(certificateAuthorities:)``
    /// always throws.
    private let unavailable: Never
    #endif

    /// Throws when the certificate authorities cannot be read, or when this build has no
    /// TLS (``Unavailable``).
    public init(certificateAuthorities: String? = nil) throws {
        #if TLS
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let certificateAuthorities { configuration.trustRoots = .file(certificateAuthorities) }
        context = try NIOSSLContext(configuration: configuration)
        #else
        throw Unavailable()
        #endif
    }

    /// Adds the TLS client handler for a connection to `host` (the name a certificate
    /// must carry; none for an IP address) at the pipeline's end.
    public func addHandler(to pipeline: ChannelPipeline.SynchronousOperations, connectingTo host: String) throws {
        #if TLS
        try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: ServiceAddress.tlsServerName(of: host)))
        #else
        switch unavailable {}
        #endif
    }

    /// This build was made without the `TLS` trait.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String {
            "this gpsfix was built without TLS, the package's TLS trait (scripts/demo leaves it out "
                + "unless an option names an ntrips:// or https:// address; swift build, scripts/install "
                + "and the packages have it); use a plain address or a build with TLS"
        }
    }
}
